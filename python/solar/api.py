"""The package's plain entry points that its own modules use too: the bundled specs, IR
checking and tracing, size overrides. `solar/__init__.py` re-exports them; modules inside the
package import them from here, never from the package's `__init__` (which imports the front
ends, and would be a cycle)."""

from __future__ import annotations

import os
from pathlib import Path

from . import _core
from .errors import UserError, argument_error

__version__ = "0.1.0"


def arch_dir() -> str:
    """Directory of the bundled architecture specs (override with $SOLAR_ARCH_DIR)."""
    env = os.environ.get("SOLAR_ARCH_DIR")
    if env:
        return env
    here = Path(__file__).resolve().parent
    for candidate in (here / "configs" / "arch", here.parents[1] / "configs" / "arch"):
        if candidate.is_dir():
            return str(candidate)
    return str(here / "configs" / "arch")


def check(path: str | os.PathLike) -> _core.Program:
    """Parse and check an IR file; raises UserError listing every problem found (a PyTorch
    or JAX problem file is an `argument` error saying which command takes it)."""
    try:
        return _core.load_program(str(path))
    except UserError:
        # Which language a file that is not valid IR is written in: asked only then, since
        # the sniffing scans the whole file (15 ms on a 20,000-node program, and 0.2 s of
        # imports on the first call) and a file that checks as IR is IR.
        try:
            refuse_source_program(str(path))
        except UserError as language:
            raise language from None
        raise


def refuse_source_program(path: str) -> None:
    """A PyTorch, JAX, NumPy, Triton, TensorFlow or CUDA program given where an IR file is
    expected: an `argument` error that names its language and the command that takes it
    (analyze, or analyze --lang through the LLM agent), not the IR parser's first complaint."""
    from .errors import argument_error
    from .frontend.capture import is_pytorch_program
    from .frontend.jax.capture import is_jax_program

    for language, test, doc in (
        ("JAX", is_jax_program, "docs/jax.md"),
        ("PyTorch", is_pytorch_program, "docs/pytorch.md"),
    ):
        if Path(path).is_file() and test(path):
            raise argument_error(
                f"{path} is a {language} program, not an Affine Loop IR file",
                f"`solar analyze {path}` captures it, lowers it to the IR and validates it "
                f"({doc}); --emit-ir FILE writes the IR",
            )
    from .agent.languages import LANGUAGES, detect

    try:
        lang = detect(path, Path(path).read_text()) if Path(path).is_file() else ""
    except (OSError, UnicodeDecodeError):
        lang = ""
    if lang in ("numpy", "triton", "tensorflow", "cuda"):
        raise argument_error(
            f"{path} is a {LANGUAGES[lang].title} program, not an Affine Loop IR file",
            f"`solar analyze {path} --lang {lang}` translates it with the LLM agent and "
            "validates the translation (docs/agent.md)"
            + ("; CUDA and Triton need --reference" if lang in ("cuda", "triton") else ""),
        )


_INT64_MAX = 2**63 - 1


def dim_overrides(dims) -> list[tuple[str, int]]:
    """Validates {name: size} (or (name, size) pairs) for the core: positive 64-bit ints."""
    items = dims.items() if isinstance(dims, dict) else (dims or [])
    out = []
    for name, size in items:
        if not isinstance(name, str) or not name:
            raise argument_error(f"dim override {name!r}: the name must be a non-empty string")
        if isinstance(size, bool) or not isinstance(size, int):
            raise argument_error(
                f"dim override {name}={size!r}: the size must be an integer",
                f"for example {name}=64",
            )
        if size <= 0 or size > _INT64_MAX:
            raise argument_error(
                f"dim override {name}={size}: sizes must be positive and fit in 64 bits"
            )
        out.append((name, size))
    return out


def trace(program, dims: dict[str, int] | None = None) -> _core.Graph:
    """Trace an IR program (a path or a checked Program) into its einsum graph."""
    overrides = dim_overrides(dims)
    if not isinstance(program, _core.Program):
        program = check(program)
    return _core.trace(program, overrides)


def load_arch(name_or_path: str) -> _core.ArchSpec:
    """An architecture spec by name (configs/arch), by the path of a YAML file, or "local":
    this machine, derived and measured once (solar.local_arch, docs/measure.md)."""
    if str(name_or_path).lower() == "local":
        from .local_arch import local_spec_path

        name_or_path = local_spec_path()
    return _core.load_arch(str(name_or_path), arch_dir())


def list_archs() -> list[str]:
    return _core.list_archs(arch_dir())
