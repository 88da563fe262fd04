"""A wrapped title breaks between words, never between a number and its unit ("29 / s per step" read as two
findings at the back of a room)."""

from __future__ import annotations

from PySide6 import QtGui

from trinity_desktop.ui import plot_widgets as pw


def test_a_number_and_its_unit_stay_on_one_line(qapp):
    title = "Training is compute-bound at global batch 256: 29 s per step"
    metrics = QtGui.QFontMetrics(pw.font(14))
    for width in range(120, 700, 7):
        lines, _cut = pw._wrap(title, metrics, width, 3)
        assert " ".join(lines) == title
        assert all(not line.startswith(("s per", "GB")) for line in lines)   # "29" never ends a line without "s"


def test_units_join_only_after_a_number():
    assert pw._words("63 of 80 GB per GPU: fits") == ["63", "of", "80 GB", "per", "GPU:", "fits"]
    assert pw._words("6.1 ms per token, 12.5 tokens/s") == ["6.1 ms", "per", "token,", "12.5 tokens/s"]
    assert pw._words("HBM is 3.1× faster") == ["HBM", "is", "3.1×", "faster"]   # a glued sign stays one word
    assert pw._words("s per step") == ["s", "per", "step"]
