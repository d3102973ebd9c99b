"""Helpers for tests that start child processes."""

from __future__ import annotations

import signal


def sigint_default() -> None:
    """`preexec_fn` for a child that a test sends SIGINT. A child of a shell's background job
    starts with SIGINT ignored, and Python then installs no handler for it, so the test's
    SIGINT would do nothing; the child gets the default back, so that its Python installs
    its handler as it does under a terminal or CI."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
