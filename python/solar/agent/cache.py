"""Accepted translations on disk, keyed by what decides them: the source (and reference)
text, the language, the model, the IR spec version and the kind of translation (a program, a
fallback kernel). One JSON file per entry, written atomically; a corrupt entry is a miss."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


def default_dir() -> str:
    """$SOLAR_TRANSLATION_CACHE, else translations/ beside the kernel cache."""
    env = os.environ.get("SOLAR_TRANSLATION_CACHE")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache"))
    return os.path.join(base, "solar", "translations")


class Cache:
    def __init__(self, directory: str):
        self.dir = Path(directory)

    @staticmethod
    def at(setting) -> Cache | None:
        """True: the default directory; a string: that directory; False/None: no cache."""
        if setting is False or setting is None:
            return None
        return Cache(default_dir() if setting is True else str(setting))

    @staticmethod
    def key(text: str, language: str, model: str, spec_version: str, kind: str) -> str:
        h = hashlib.sha256()
        for part in (kind, language, model, spec_version, text):
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest()

    def get(self, key: str) -> dict | None:
        path = self.dir / f"{key}.json"
        try:
            entry = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return entry if isinstance(entry, dict) and isinstance(entry.get("program"), str) else None

    def put(self, key: str, entry: dict) -> None:
        """Best effort: a cache that cannot be written (read-only, full) costs a retranslation,
        never the translation."""
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp = self.dir / f".{key}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps(entry))
            os.replace(tmp, self.dir / f"{key}.json")
        except OSError:
            pass
