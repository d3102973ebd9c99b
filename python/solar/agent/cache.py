"""Accepted translations on disk, keyed by what decides them: the source (and reference)
text, the language, the model, the IR spec version and the kind of translation (a program, a
fallback kernel). One JSON file per entry, written atomically; a corrupt entry is a miss.

The cache is private to the user, by the kernel cache's rules (docs/execution.md, "The
cache"): the directory and each parent Solar creates are made 0700 whatever the umask; a
directory not owned by the user, or that its group or others may write, is refused with a
UserError naming it; an entry is read only from a regular file owned by the user and not
writable by others (opened with O_NOFOLLOW, checked with fstat), up to MAX_ENTRY_BYTES; any
other entry is a miss. An entry is never trusted as it is: its program goes through the
checker and the printer like a fresh reply (translate.canonical)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from ..errors import argument_error

MAX_ENTRY_BYTES = 4 * 1024 * 1024  # an entry holds one program of at most 256 KiB, and notes


def default_dir() -> str:
    """$SOLAR_TRANSLATION_CACHE; else $SOLAR_CACHE_DIR/translations (the kernel cache's
    setting); else $XDG_CACHE_HOME/solar/translations (an absolute XDG_CACHE_HOME only),
    else ~/.cache/solar/translations."""
    env = os.environ.get("SOLAR_TRANSLATION_CACHE")
    if env:
        return env
    shared = os.environ.get("SOLAR_CACHE_DIR")
    if shared:
        return os.path.join(shared, "translations")
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "solar", "translations")


def private_dir(directory: Path) -> None:
    """Creates `directory` (and each missing parent) 0700 whatever the umask, then refuses
    it, with a UserError, when it is not a directory owned by the user that its group and
    others cannot write. Raises OSError when it cannot be created or read."""
    missing = []
    for p in (directory, *directory.parents):
        if os.path.lexists(p):
            break
        missing.append(p)
    for p in reversed(missing):
        try:
            os.mkdir(p, 0o700)
            os.chmod(p, 0o700)  # the umask may have cleared bits, never set any: exact now
        except FileExistsError:
            pass  # made by a concurrent run: checked below like any directory
    st = os.stat(directory)  # an OSError (cannot create, cannot read) is the caller's
    fix = f"chmod 700 '{directory}', or set SOLAR_TRANSLATION_CACHE to a directory of your own"
    if not stat.S_ISDIR(st.st_mode):
        raise argument_error(f"the translation cache {directory} is not a directory", fix)
    if st.st_uid != os.geteuid():
        raise argument_error(
            f"the translation cache {directory} is owned by uid {st.st_uid}, not by you "
            f"(uid {os.geteuid()}): its entries could not be trusted",
            fix,
        )
    if st.st_mode & 0o022:
        raise argument_error(
            f"the translation cache {directory} is writable by its group or others (mode "
            f"{stat.S_IMODE(st.st_mode):04o}): its entries could not be trusted",
            fix,
        )


def read_entry(path: Path) -> bytes | None:
    """The bytes of a trusted entry file, or None: missing, not a regular file (a symlink, a
    FIFO, a directory), not the user's, writable by others, or over MAX_ENTRY_BYTES."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (
            not stat.S_ISREG(st.st_mode)
            or st.st_uid != os.geteuid()
            or st.st_mode & 0o022
            or st.st_size > MAX_ENTRY_BYTES
        ):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_ENTRY_BYTES + 1)
        return data if len(data) <= MAX_ENTRY_BYTES else None
    except OSError:
        return None
    finally:
        os.close(fd)


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
        """The entry under `key`, or None (a miss). Raises UserError when the directory is
        not private (private_dir)."""
        if not os.path.lexists(self.dir):
            return None
        try:
            private_dir(self.dir)
        except OSError:
            return None
        data = read_entry(self.dir / f"{key}.json")
        if data is None:
            return None
        try:
            entry = json.loads(data)
        except (ValueError, RecursionError):
            return None
        return entry if isinstance(entry, dict) and isinstance(entry.get("program"), str) else None

    def put(self, key: str, entry: dict) -> None:
        """Best effort: a cache that cannot be written (read-only, full) costs a retranslation,
        never the translation. A directory that is not private raises UserError."""
        tmp = self.dir / f".{key}.{os.getpid()}.tmp"
        try:
            private_dir(self.dir)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(json.dumps(entry))
            os.replace(tmp, self.dir / f"{key}.json")
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
