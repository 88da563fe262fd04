"""The order the suite runs in under `pytest -n N --dist worksteal` (tests/conftest.py): long tests first, shared
out so that every worker starts on its part of them and the short tests even out the end.

worksteal hands worker i the i-th of N consecutive blocks of the collection (`len(pending) // nodes_remaining`
tests each), each worker runs its block front to back, and an idle worker steals the back half of the busiest
one's queue. So each block here begins with its share of the long units, dealt heaviest first to the block with
the least long work (longest processing time first), and is filled up with short tests in collection order.

A unit is the tests that must stay together: all packaging tests (one bundle build under a lock,
tests/once_per_session.py), or the tests of one long test function and parameter. Its weight is the `seconds`
of its `long` marker (the packaging tests: `BUNDLE_SECONDS`), measured on the shared 2-core machine.
"""

from __future__ import annotations

import re

BUNDLE_SECONDS = 420.0   # the PyInstaller build, the .deb and the tarball, and their checks (2-core machine, idle)
LONG_SECONDS = 60.0      # a `long` marker without `seconds`


def _unit_key(item) -> str | None:
    if item.get_closest_marker("bundle") is not None:
        return "bundle"
    if item.get_closest_marker("long") is None:
        return None
    param = re.search(r"\[(.*)\]$", item.nodeid)
    return f"{item.nodeid.split('::')[0]}[{param.group(1) if param else item.nodeid}]"


def _seconds(item) -> float:
    if item.get_closest_marker("bundle") is not None:
        return BUNDLE_SECONDS
    return float(item.get_closest_marker("long").kwargs.get("seconds", LONG_SECONDS))


def block_sizes(total: int, workers: int) -> list[int]:
    """worksteal's first split: `len(pending) // nodes_remaining` tests to each worker in turn."""
    sizes, left = [], total
    for i in range(workers):
        sizes.append(left // (workers - i))
        left -= sizes[-1]
    return sizes


def ordered(items: list, workers: int) -> list:
    """`items` in the order described above, for `workers` workers (1: every long unit first)."""
    units: dict[str, list] = {}
    short = []
    for item in items:
        key = _unit_key(item)
        if key is None:
            short.append(item)
        else:
            units.setdefault(key, []).append(item)
    workers = max(1, workers)
    blocks: list[list] = [[] for _ in range(workers)]
    load = [0.0] * workers
    for tests in sorted(units.values(), key=lambda t: -max(_seconds(i) for i in t)):
        lightest = min(range(workers), key=lambda b: (load[b], b))
        blocks[lightest] += tests
        load[lightest] += max(_seconds(i) for i in tests)
    rest = iter(short)
    for block, size in zip(blocks, block_sizes(len(items), workers), strict=True):
        while len(block) < size:
            nxt = next(rest, None)
            if nxt is None:
                break
            block.append(nxt)
    return [item for block in blocks for item in block] + list(rest)
