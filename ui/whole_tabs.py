"""Tab bars that show whole tabs only: when a bar scrolls, a tab it could show only in part is not drawn.

Qt scrolls a bar just far enough to show its current tab and leaves the tab at the other end cut ("…tisation",
"Valid"); `WholeTabsStyle` skips drawing a tab that reaches past the bar's visible part (left of its scroll
buttons), and the scroll buttons still reach it; the blank is the bar's bare background (no tear marks). It also sets the narrow tab padding (3 px by 5 px, as a
style sheet would; a style sheet on the bar would draw the tabs itself and bypass the check).
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

H_SPACE, V_SPACE = 10, 6   # pixels around a tab's text, both sides together
_TEARS = (QtWidgets.QStyle.PrimitiveElement.PE_IndicatorTabTear, QtWidgets.QStyle.PrimitiveElement.PE_IndicatorTabTearRight)


def shown_part(bar: QtWidgets.QTabBar) -> QtCore.QRect:
    """The part of the bar that shows tabs: all of it, less its scroll buttons when it scrolls."""
    arrows = [b.geometry().left() for b in bar.findChildren(QtWidgets.QToolButton) if b.isVisible()]
    return bar.rect().adjusted(0, 0, (min(arrows) - bar.width()) if arrows else 0, 0)


class WholeTabsStyle(QtWidgets.QProxyStyle):
    """The application's style, with narrow tabs, and a tab shown in part left undrawn."""

    def pixelMetric(self, metric, option=None, widget=None) -> int:  # noqa: N802 (Qt name)
        if metric == QtWidgets.QStyle.PixelMetric.PM_TabBarTabHSpace:
            return H_SPACE
        if metric == QtWidgets.QStyle.PixelMetric.PM_TabBarTabVSpace:
            return V_SPACE
        return super().pixelMetric(metric, option, widget)

    def drawPrimitive(self, element, option, painter, widget=None) -> None:  # noqa: N802 (Qt name)
        if element not in _TEARS:
            super().drawPrimitive(element, option, painter, widget)

    def drawControl(self, element, option, painter, widget=None) -> None:  # noqa: N802 (Qt name)
        if (element == QtWidgets.QStyle.ControlElement.CE_TabBarTab and isinstance(widget, QtWidgets.QTabBar)
                and not shown_part(widget).contains(option.rect)):
            return
        super().drawControl(element, option, painter, widget)


_STYLE: list[WholeTabsStyle] = []   # one for the application, kept alive here (a widget does not own its style)


def use_whole_tabs(bar: QtWidgets.QTabBar) -> None:
    """Draw `bar` with WholeTabsStyle (once)."""
    if not _STYLE:
        _STYLE.append(WholeTabsStyle())
    if bar.property("wholeTabs") is not True:
        bar.setStyleSheet("")
        bar.setStyle(_STYLE[0])
        bar.setProperty("wholeTabs", True)
