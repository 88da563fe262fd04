"""Form fields with an outline a person can see, in every theme (#21).

Fusion draws the frame of a line edit, spin box or combo box in the window colour darkened (1.3:1 on the
high-contrast theme's black, about 2:1 on the light and dark windows), under WCAG 2.1's 3:1 for a
control's boundary (1.4.11 non-text contrast). `FramedFields`, a proxy of the application's style, lets the
style draw the field as usual (its arrows, its focus) and then draws a 1-pixel outline over the frame in
`theme.field_frame_color`. A style sheet cannot do this: a styled spin box loses its native step arrows.
"""

from __future__ import annotations

import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.ui import theme

_FIELDS = (QtWidgets.QLineEdit, QtWidgets.QAbstractSpinBox, QtWidgets.QComboBox)


class FramedFields(QtWidgets.QProxyStyle):
    """The base style, with a readable outline round every form field."""

    def __init__(self, base: QtWidgets.QStyle | None = None):
        super().__init__(base)
        self.frame = QtGui.QColor(theme.field_frame_color(theme.current_theme()))

    def _outline(self, option, painter, widget) -> None:
        if widget is not None and isinstance(widget.parentWidget(), _FIELDS):
            return   # a spin or combo box's own line edit: the parent's outline is the field's
        painter.save()
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        painter.setPen(QtGui.QPen(self.frame, 1))
        painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        painter.drawRect(QtCore.QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5))
        painter.restore()

    def drawPrimitive(self, element, option, painter, widget=None):  # noqa: N802 (Qt name)
        super().drawPrimitive(element, option, painter, widget)
        if element == QtWidgets.QStyle.PrimitiveElement.PE_FrameLineEdit and isinstance(widget, QtWidgets.QLineEdit):
            self._outline(option, painter, widget)

    def drawComplexControl(self, control, option, painter, widget=None):  # noqa: N802 (Qt name)
        super().drawComplexControl(control, option, painter, widget)
        cc = QtWidgets.QStyle.ComplexControl
        if control in (cc.CC_SpinBox, cc.CC_ComboBox) and getattr(option, "frame", True):
            self._outline(option, painter, widget)


# The one framing style, held here for the life of the process. QApplication.setStyle deletes the style it
# replaces, and PySide may hand back a plain QStyle wrapper for app.style(), so a new proxy per theme change
# swapped styles under live widgets (Qt aborted in setStyle while a window was built, in a CI run); the style is
# now installed once and only its colour changes.
_installed: FramedFields | None = None


def frame_fields(app: QtWidgets.QApplication, color: str) -> None:
    """Install the framing style on the application once, and set its outline colour. No widget is visited:
    the theme's new palette and style sheet (theme.apply_theme, just before) repaint every field, and a walk over
    `app.allWidgets()` wraps widgets that are being destroyed (a worker crashed there in a CI run)."""
    global _installed
    if _installed is None or not shiboken6.isValid(_installed):   # none yet, or its application is gone
        _installed = FramedFields(QtWidgets.QStyleFactory.create(app.style().name()) or None)
        app.setStyle(_installed)
    _installed.frame = QtGui.QColor(color)
