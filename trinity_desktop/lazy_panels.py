"""Panels built on first use: a dock hidden or behind a tab costs nothing at start-up.

`LazyPanels` maps each registered dock name to its panel and builds the panel the first time anyone asks for
it (`panels[name]`): the main window asks when the dock is first shown, an export or a test when it reads the
panel. Iterating gives the names; `built()` gives only the panels that exist, for code that must not build
(delivering results to what is on screen). `on_built(name, panel)` runs once per panel, right after it is
stored, so wiring can look the panel up again without building it twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from PySide6 import QtWidgets


class LazyPanels(Mapping):
    def __init__(self, names: Iterable[str], factory: Callable[[str], QtWidgets.QWidget],
                 on_built: Callable[[str, QtWidgets.QWidget], None]):
        self._names = tuple(names)
        self._factory, self._on_built = factory, on_built
        self._built: dict[str, QtWidgets.QWidget] = {}

    def __getitem__(self, name: str) -> QtWidgets.QWidget:
        panel = self._built.get(name)
        if panel is None:
            if name not in self._names:
                raise KeyError(name)
            panel = self._built[name] = self._factory(name)
            self._on_built(name, panel)
        return panel

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def is_built(self, name: str) -> bool:
        return name in self._built

    def built(self) -> dict[str, QtWidgets.QWidget]:
        """The panels that exist now, in registry order (building none)."""
        return {n: self._built[n] for n in self._names if n in self._built}
