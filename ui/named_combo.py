"""Combo boxes that show short names and keep the full ones: the box shows "Phone NPU", its list and hover
"Phone NPU (Apple A17 Pro Neural Engine, iPhone 15 Pro)", so no value is ever cut in a narrow form."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.ui.plot_widgets import font

FULL_NAME_ROLE = QtCore.Qt.ItemDataRole.UserRole + 7   # a combo item's full name (its text is the short one)


NAME_DETAIL = (" (", ", ")   # what starts a name's detail: "Phone NPU (Apple ...)", "x86 laptop CPU, 8 P-cores"


def short_name(text: str, splits: Sequence[str] = NAME_DETAIL) -> str:
    """The name before its detail: "Phone NPU (Apple A17 Pro ...)" -> "Phone NPU"."""
    cut = min((text.find(sep) for sep in splits if sep in text), default=-1)
    return text[:cut].strip() if cut > 0 else text


class FullNameDelegate(QtWidgets.QStyledItemDelegate):
    """A combo's drop-down list shows each item's full name (the box shows the short one)."""

    def initStyleOption(self, option, index) -> None:  # noqa: N802 (Qt name)
        super().initStyleOption(option, index)
        full = index.data(FULL_NAME_ROLE)
        if full:
            option.text = full


def labelled_combo(name: str, tip: str, items, min_chars: int = 12) -> QtWidgets.QComboBox:
    """A combo box with an accessible name, a tooltip, legible font and (text, data) items. The box shows each
    item's short name whole (it is at least as wide as the longest); the list and the hover give the full
    name, so a long entry is never cut and never widens the panel."""
    combo = QtWidgets.QComboBox()
    combo.setAccessibleName(name)
    combo.setFont(font())
    combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setItemDelegate(FullNameDelegate(combo))
    metrics = QtGui.QFontMetrics(font())
    widest_short, widest_full = 0, 0
    for text, data in items:
        short = short_name(text)
        combo.addItem(short, data)
        combo.setItemData(combo.count() - 1, text, FULL_NAME_ROLE)
        combo.setItemData(combo.count() - 1, text, QtCore.Qt.ItemDataRole.ToolTipRole)
        widest_short = max(widest_short, len(short))
        widest_full = max(widest_full, metrics.horizontalAdvance(text))
    combo.setMinimumContentsLength(max(min_chars, widest_short + 1))
    combo.view().setMinimumWidth(widest_full + 40)

    def follow(index: int) -> None:
        full = combo.itemData(index, FULL_NAME_ROLE)
        combo.setToolTip(f"{tip}\n{full}" if full and full != combo.itemText(index) else tip)

    combo.currentIndexChanged.connect(follow)
    follow(combo.currentIndex())
    return combo
