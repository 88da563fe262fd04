"""Reliability edges of issue 26: one atomic writer (a failed save keeps the previous file), caption templates
of plain {name} placeholders only, and the training planner refusing out-of-range axes before it enumerates
their divisors."""

from __future__ import annotations

import os
import time

import pytest

from trinity_desktop.captions import CaptionError, template_names
from trinity_desktop.model import ValidationError
from trinity_desktop.model.base.files import FileNotWritten, write_atomically
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.inputs.assumptions import write_calibrated
from trinity_desktop.model.search.planner import plan_training, training_space
from trinity_desktop.refusals import MAX_LINE, one_line, refusal


def test_an_atomic_write_replaces_the_file_whole(tmp_path):
    path = tmp_path / "a.json"
    path.write_text("old", encoding="utf-8")
    os.chmod(path, 0o600)
    write_atomically(path, b"new")
    assert path.read_bytes() == b"new" and (path.stat().st_mode & 0o777) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]  # no temporary file left


def test_a_failed_write_keeps_the_previous_file_and_says_why(tmp_path, monkeypatch):
    path = tmp_path / "a.json"
    path.write_text("old", encoding="utf-8")

    def full_disk(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(FileNotWritten, match=r"\(No space left on device\); the previous file is kept"):
        write_atomically(path, b"new")
    assert path.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_a_write_into_a_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotWritten, match="cannot write in the folder"):
        write_atomically(tmp_path / "missing" / "a.json", b"x")


def test_the_calibrated_set_is_written_atomically(tmp_path, monkeypatch):
    path = tmp_path / "calibrated.toml"
    write_calibrated({"compute_efficiency": (0.4, 0.5, 0.6)}, "fit", path)
    before = path.read_text(encoding="utf-8")
    assert 'name = "compute_efficiency"' in before
    monkeypatch.setattr(os, "fsync", lambda _fd: (_ for _ in ()).throw(OSError(5, "Input/output error")))
    with pytest.raises(FileNotWritten):
        write_calibrated({"compute_efficiency": (0.3, 0.4, 0.5)}, "second fit", path)
    assert path.read_text(encoding="utf-8") == before


@pytest.mark.parametrize(
    "template",
    [
        "{model:>99999999}",
        "{model!r}",
        "{model.__class__}",
        "{model[0]}",
        "{}",
        "{0}",
        "{a:{b}}",
        "{model",
        "x" * 2001,
    ],
)
def test_only_plain_placeholders_and_2000_characters(template):
    with pytest.raises(CaptionError) as caught:
        template_names(template)
    assert len(str(caught.value)) < MAX_LINE and "\n" not in str(caught.value)


def test_plain_placeholders_are_read():
    assert template_names("{model} on {gpus} {{literal}} {prev_memory}") == ["model", "gpus", "prev_memory"]


def test_a_refusal_is_one_short_line():
    assert refusal("--seq-len", 10**399, "a whole number from 1 to 16777216") == (
        "--seq-len 1000…000 (400 digits) is not allowed: a whole number from 1 to 16777216"
    )
    line = one_line("error: " + " ".join(["word"] * 400) + "\nsecond line")
    assert len(line) < MAX_LINE and "\n" not in line and line.endswith("characters)")


@pytest.mark.parametrize(
    ("gpus", "batch", "seq", "field"),
    [
        (8, 10**18, 4096, "global_batch"),
        (8, 512, 2**63, "seq_len"),
        ([8] * 9, 512, 4096, "gpu_counts"),
        (2**40, 512, 4096, "gpus"),
        (0, 512, 4096, "gpus"),
    ],
)
def test_the_planner_refuses_out_of_range_axes_before_searching(gpus, batch, seq, field):
    model, hardware = presets.model_presets()["llama-2-7b"], presets.hardware_presets()["h100-sxm"]
    start = time.perf_counter()
    for search in (
        lambda: training_space(model, gpus, batch, seq),
        lambda: plan_training(model, hardware, gpus, batch, seq),
    ):
        with pytest.raises(ValidationError) as caught:
            search()
        assert caught.value.field == field
    assert time.perf_counter() - start < 1.0


def test_a_calibrated_set_whose_folder_cannot_be_made_is_a_clear_error(tmp_path):
    (tmp_path / "a_file").write_text("", encoding="utf-8")
    with pytest.raises(FileNotWritten, match="its folder cannot be made"):
        write_calibrated(
            {"compute_efficiency": (0.4, 0.5, 0.6)}, "fit", tmp_path / "a_file" / "sub" / "c.toml"
        )
