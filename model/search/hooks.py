"""How a worker thread follows a planner's search: progress after each chunk, and a way to stop it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class SearchHooks:
    """`progress(fraction)` is called after each chunk of a search; `cancelled()`, polled before each chunk,
    returning True stops the search (the plan keeps what was found, `cancelled=True`). None: not followed."""

    progress: Callable[[float], None] | None = None
    cancelled: Callable[[], bool] | None = None

    def report(self, fraction: float) -> None:
        if self.progress is not None:
            self.progress(fraction)

    def stopped(self) -> bool:
        return self.cancelled is not None and bool(self.cancelled())


NO_HOOKS = SearchHooks()
