"""Results of worker threads handed to the UI thread without touching an object the UI thread may delete.

A worker that emits a signal of its own QObject races the UI thread: PySide checks that the C++ object is alive,
then emits, and a deletion in between (a panel closed, a test's widgets torn down) is a use-after-free. CI saw it
as a segmentation fault with the validation and bands workers still running. `post(method, *args)` emits on one
relay instead, made in the UI thread and kept for the life of the process; the relay calls `method(*args)` in the
UI thread, and only while the method's owner is alive there. The owner is held weakly, so a worker never keeps a
closed panel alive, and the check and the call run in the thread that deletes, so nothing can vanish between them.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import shiboken6
from PySide6 import QtCore


class _Relay(QtCore.QObject):
    posted = QtCore.Signal(object, object)   # (weak method, args), emitted from any thread

    def __init__(self) -> None:
        super().__init__()
        self.posted.connect(self._deliver, QtCore.Qt.ConnectionType.QueuedConnection)

    def _deliver(self, target: weakref.WeakMethod, args: tuple) -> None:
        method = target()
        if method is None:
            return
        owner = method.__self__
        if isinstance(owner, shiboken6.Shiboken.Object) and not shiboken6.isValid(owner):
            return
        method(*args)


_relay: _Relay | None = None


def install() -> None:
    """Make the relay, once, in the calling thread: call it from the UI thread (a worker owner's __init__)."""
    global _relay
    if _relay is None:
        _relay = _Relay()


def post(method: Callable, *args) -> None:
    """Call the bound `method(*args)` in the UI thread, if its owner is still alive when the call comes due.
    Safe from any thread once `install()` has run."""
    if _relay is None:
        raise RuntimeError("worker_relay.install() must run in the UI thread before a worker posts")
    _relay.posted.emit(weakref.WeakMethod(method), args)
