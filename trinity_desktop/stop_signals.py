"""Stopping a command-line run cleanly: Ctrl+C (SIGINT) or SIGTERM (`kill`, a logout) ends it with one line on
stderr and the shell's status for that signal, 128 + its number (130, 143), never a KeyboardInterrupt traceback.
Every file a command writes goes through `write_atomically` (model/base/files.py), so a stop mid-write leaves
the previous file. The window handles both signals itself (app.quit_on_interrupt: SIGTERM first writes the
unsaved work for the next start to offer)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Stopped(Exception):
    """A signal asked the command to stop; `status` is the exit status the shell expects for it."""

    def __init__(self, signum: int):
        self.signum, self.status = signum, 128 + signum
        super().__init__(f"stopped by {signal.Signals(signum).name}")


def _stop(signum: int, _frame) -> None:
    raise Stopped(signum)


@contextmanager
def stopping_cleanly() -> Iterator[None]:
    """Within the block SIGINT and SIGTERM raise `Stopped` (only the main thread can set handlers: elsewhere
    the block runs with the handlers as they are); the previous handlers come back after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s in previous:
        signal.signal(s, _stop)
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
