"""Worker results reach the UI thread through ui/worker_relay.py: called there while the owner lives, dropped once
it is deleted, and no worker ever emits on an object the UI thread deletes (CI stop 28's segmentation fault)."""

import threading

import shiboken6
from PySide6 import QtCore

from trinity_desktop.ui import worker_relay
from trinity_desktop.ui.bands import BandService


class Owner(QtCore.QObject):
    def __init__(self):
        super().__init__()
        worker_relay.install()
        self.calls: list[tuple[int, bool]] = []

    def receive(self, value: int) -> None:
        self.calls.append((value, threading.current_thread() is threading.main_thread()))


def post_from_thread(method, *args) -> None:
    t = threading.Thread(target=worker_relay.post, args=(method, *args))
    t.start()
    t.join()


def test_delivered_in_the_ui_thread(qtbot):
    owner = Owner()
    post_from_thread(owner.receive, 7)
    qtbot.waitUntil(lambda: owner.calls == [(7, True)], timeout=2000)


def test_dropped_once_the_owner_is_deleted(qapp):
    owner = Owner()
    post_from_thread(owner.receive, 1)
    calls = owner.calls
    shiboken6.delete(owner)      # the C++ object goes before the queued call comes due
    qapp.processEvents()
    assert calls == []


def test_band_worker_outlives_its_service(qapp):
    """The service is deleted while its worker computes; the worker's result is dropped, nothing crashes."""
    from trinity_desktop.model import Scenario
    from trinity_desktop.model.inputs import presets

    sc = Scenario(hardware=presets.hardware_presets()["h100-sxm"], model=presets.model_presets()["llama-3-8b"],
                  kind="decode", gpus=1)
    service = BandService(samples=64)
    done = service._executor   # kept: the worker still runs after the service's C++ object is gone
    service._start(sc)
    shiboken6.delete(service)
    done.shutdown(wait=True)
    qapp.processEvents()
    assert not shiboken6.isValid(service)
