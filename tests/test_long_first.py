"""The suite's order for `--dist worksteal` (tests/long_first.py): every item kept once, the packaging tests
together, each worker's block starting with its share of the long tests, dealt heaviest first."""

from __future__ import annotations

from dataclasses import dataclass, field

from long_first import block_sizes, ordered


@dataclass
class Marker:
    kwargs: dict = field(default_factory=dict)


@dataclass
class Item:
    nodeid: str
    marks: dict = field(default_factory=dict)

    def get_closest_marker(self, name):
        return self.marks.get(name)


def _suite() -> list[Item]:
    items = [Item(f"tests/test_short.py::test_{i}") for i in range(40)]
    items[5:5] = [Item(f"tests/e2e/test_bundle.py::test_b{i}", {"bundle": Marker()}) for i in range(3)]
    items[20:20] = [Item("tests/ui/test_soak.py::test_soak", {"long": Marker({"seconds": 500})})]
    items[30:30] = [Item(f"tests/ui/test_audit.py::test_{k}[{p}]", {"long": Marker({"seconds": 80})})
                    for p in ("a", "b") for k in ("x", "y")]
    return items


def test_worksteal_splits_like_xdist():
    assert block_sizes(10, 3) == [3, 3, 4]
    assert sum(block_sizes(2311, 2)) == 2311


def test_each_block_starts_with_its_long_units_and_nothing_is_lost():
    items = _suite()
    out = ordered(items, 2)
    assert sorted(i.nodeid for i in out) == sorted(i.nodeid for i in items)
    cut = block_sizes(len(out), 2)[0]
    first, second = [i.nodeid.split("::")[1] for i in out[:cut]], [i.nodeid.split("::")[1] for i in out[cut:]]
    # heaviest first, each to the block with less long work: the soak (500 s) to block 0, the bundle (420 s) to
    # block 1, audit a (80 s) to block 1 (420 < 500), audit b to the tie's first block; a parameter's tests together
    assert first[:3] == ["test_soak", "test_x[b]", "test_y[b]"]
    assert second[:5] == ["test_b0", "test_b1", "test_b2", "test_x[a]", "test_y[a]"]
    assert all(name.startswith("test_") and name[5:].isdigit() for name in first[3:] + second[5:])


def test_one_worker_runs_every_long_unit_first():
    out = ordered(_suite(), 1)
    kinds = ["short" if "test_short" in i.nodeid else "long" for i in out]
    assert kinds == sorted(kinds)   # "long" < "short": every long unit before every short test
