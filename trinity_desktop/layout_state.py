"""Checking a saved window layout (the bytes of `QMainWindow.saveState`) before Qt restores it.

`QMainWindow.restoreState` trusts its input: a damaged layout can crash the process. So every layout the app
restores (from QSettings, from a slide of a session file) is parsed here first, against the structure Qt writes
(Qt 6 qmainwindow.cpp, qdockarealayout.cpp, qtoolbararealayout.cpp; QDataStream, big-endian):

    int32 0xff (version marker), int32 layout version,
    uchar 0xfd (dock-widget state marker), int32 area count, per area {int32 area 0-3, QSize, item info},
    QSize central widget, 4 x int32 corners (Qt.DockWidgetArea),
    [uchar 0xf9, QRect, item info]* (floating tab groups),
    uchar 0xfc (tool-bar marker), int32 line count, per line {int32 area, int32 n, n x tool bar}.

An item info is uchar 0xfc (sequence) or 0xfa + int32 current tab, then uchar orientation (1, 2), int32 n and n
items: uchar 0xfb, QString dock name, uchar flags, 4 x int32 (pos, size, min width, min height), or uchar 0xfc,
4 x int32 (pos, size, min width, min height) and a nested item info.

`check_layout(data, version, dock_names, toolbar_names)` returns "" for a layout that matches the structure
exactly (every byte accounted for), names only known docks and tool bars, each at most once, and holds sizes
and counts within bounds; otherwise a one-line reason. Only a checked layout reaches `restoreState`.
"""

from __future__ import annotations

import struct
from collections.abc import Collection

VERSION_MARKER = 0xFF
DOCK_STATE_MARKER = 0xFD
FLOATING_TABS_MARKER = 0xF9
TOOLBAR_MARKER_EX = 0xFC
SEQUENCE_MARKER, TAB_MARKER, WIDGET_MARKER = 0xFC, 0xFA, 0xFB
DOCK_AREAS = 4                       # QInternal::DockCount: left, right, top, bottom
CORNER_AREAS = (1, 2, 4, 8)          # Qt.DockWidgetArea of each corner
MAX_PIXELS = 1 << 16                 # sizes and positions (a 65,536-pixel window is already absurd)
MAX_MINIMUM = 1 << 30               # minimum sizes: QWIDGETSIZE_MAX (2^24 - 1) summed over a group's docks
MAX_NESTING = 16
MAX_BYTES = 1 << 20


class LayoutError(ValueError):
    """A saved layout that does not match the structure Qt writes."""


class _Reader:
    def __init__(self, data: bytes, docks: Collection[str], toolbars: Collection[str]):
        self.data, self.at = data, 0
        self.docks, self.toolbars = set(docks), set(toolbars)
        self.seen: set[str] = set()

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise LayoutError(f"ends early (byte {len(self.data)} of at least {self.at + n})")
        chunk = self.data[self.at:self.at + n]
        self.at += n
        return chunk

    def uchar(self) -> int:
        return self.take(1)[0]

    def int32(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def uint32(self) -> int:
        return struct.unpack(">I", self.take(4))[0]

    def marker(self, expected: int, what: str) -> None:
        got = self.uchar()
        if got != expected:
            raise LayoutError(f"{what} marker is 0x{got:02x}, expected 0x{expected:02x} (byte {self.at - 1})")

    def bounded(self, what: str, lo: int = -MAX_PIXELS, hi: int = MAX_PIXELS) -> int:
        value = self.int32()
        if not lo <= value <= hi:
            raise LayoutError(f"{what} = {value} is outside {lo} to {hi} (byte {self.at - 4})")
        return value

    def size(self, what: str) -> None:  # QSize: width, height (-1 = invalid, as Qt writes for empty areas)
        self.bounded(f"{what} width", -1)
        self.bounded(f"{what} height", -1)

    def minimum_size(self, what: str) -> None:
        """Minimum width and height: up to QWIDGETSIZE_MAX (2^24 - 1) per dock, summed over a group."""
        self.bounded(f"{what} minimum width", 0, MAX_MINIMUM)
        self.bounded(f"{what} minimum height", 0, MAX_MINIMUM)

    def name(self, known: set[str], what: str) -> str:
        length = self.uint32()
        if length == 0xFFFFFFFF or length % 2 or length > 512:
            raise LayoutError(f"{what} name has a bad length {length} (byte {self.at - 4})")
        try:
            text = self.take(length).decode("utf-16-be")
        except UnicodeDecodeError:
            raise LayoutError(f"{what} name is not text (byte {self.at - length})") from None
        if text not in known:
            raise LayoutError(f"names an unknown {what} {text[:40]!r}")
        if text in self.seen:
            raise LayoutError(f"names the {what} {text!r} twice")
        self.seen.add(text)
        return text

    def item_info(self, depth: int) -> None:
        if depth > MAX_NESTING:
            raise LayoutError("nests dock groups too deeply")
        kind = self.uchar()
        if kind not in (SEQUENCE_MARKER, TAB_MARKER):
            raise LayoutError(f"dock group marker is 0x{kind:02x} (byte {self.at - 1})")
        current = self.int32() if kind == TAB_MARKER else None
        orientation = self.uchar()
        if orientation not in (1, 2):
            raise LayoutError(f"dock group orientation is {orientation} (byte {self.at - 1})")
        count = self.bounded("dock group item count", 0, len(self.docks))
        if current is not None and not -1 <= current < max(count, 1):
            raise LayoutError(f"current tab {current} of {count} tabs")
        for _ in range(count):
            marker = self.uchar()
            if marker == WIDGET_MARKER:
                self.name(self.docks, "dock")
                if self.uchar() & ~0x03:  # StateFlagVisible | StateFlagFloating
                    raise LayoutError(f"dock flags hold unknown bits (byte {self.at - 1})")
                self.bounded("dock position")
                self.bounded("dock size", -1)
                self.minimum_size("dock")
            elif marker == SEQUENCE_MARKER:
                self.bounded("dock group position")
                self.bounded("dock group size", -1)
                self.minimum_size("dock group")
                self.item_info(depth + 1)
            else:
                raise LayoutError(f"dock item marker is 0x{marker:02x} (byte {self.at - 1})")

    def toolbars_state(self) -> None:
        self.marker(TOOLBAR_MARKER_EX, "tool-bar")
        lines = self.bounded("tool-bar line count", 0, max(len(self.toolbars), 0) + DOCK_AREAS)
        seen_docks, self.seen = self.seen, set()
        for _ in range(lines):
            self.bounded("tool-bar area", 0, DOCK_AREAS - 1)
            for _ in range(self.bounded("tool bars in a line", 0, len(self.toolbars))):
                self.name(self.toolbars, "tool bar")
                if self.uchar() & ~0x03:  # shown | vertical
                    raise LayoutError(f"tool-bar flags hold unknown bits (byte {self.at - 1})")
                self.bounded("tool-bar position")
                self.bounded("tool-bar preferred size", -1)
                self.take(8)  # the packed geometry: two uint32 of 15-bit fields, any value unpacks
        self.seen = seen_docks


def check_layout(data: bytes, version: int, dock_names: Collection[str], toolbar_names: Collection[str] = ()) -> str:
    """"" when `data` is a well-formed layout of this window at `version`; otherwise why it is not."""
    data = bytes(data)
    if not data:
        return "the saved layout is empty"
    if len(data) > MAX_BYTES:
        return f"the saved layout is {len(data)} bytes; a layout is at most {MAX_BYTES}"
    r = _Reader(data, dock_names, toolbar_names)
    try:
        if r.int32() != VERSION_MARKER:
            return "the saved layout does not start with Qt's version marker"
        saved = r.int32()
        if saved != version:
            return f"the saved layout has version {saved}; this app reads version {version}"
        r.marker(DOCK_STATE_MARKER, "dock state")
        areas = r.bounded("dock area count", 0, DOCK_AREAS)
        for _ in range(areas):
            r.bounded("dock area", 0, DOCK_AREAS - 1)
            r.size("dock area")
            r.item_info(0)
        r.size("central widget")
        for _ in range(4):
            if r.int32() not in CORNER_AREAS:
                raise LayoutError(f"a corner names no dock area (byte {r.at - 4})")
        while r.at < len(data) and data[r.at] == FLOATING_TABS_MARKER:
            r.take(1)
            for what in ("floating group x", "floating group y", "floating group width", "floating group height"):
                r.bounded(what)
            r.item_info(0)
        r.toolbars_state()
        if r.at != len(data):
            raise LayoutError(f"has {len(data) - r.at} bytes after its end")
    except LayoutError as exc:
        return f"the saved layout is damaged: {exc}"
    return ""
