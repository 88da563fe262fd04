"""The triangle's disaggregated-serving layer (#23): the prefill pool and the decode pool as squares at their own
pressures (model/views/pool_points.py), joined by the KV transfer each request makes, the edge drawn in the
bandwidth colour; hidden for aggregated serving."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg

from trinity_desktop.model import Results, barycentric
from trinity_desktop.model.views.pool_points import PoolPoints, pool_points
from trinity_desktop.ui import theme
from trinity_desktop.ui.triangle_labels import CORNERS

EDGE_SAMPLES = 24  # points along the pools' edge that labels keep off


def _point(pressure) -> tuple[float, float]:
    w = barycentric(*[v if math.isfinite(v) else 0.0 for v in pressure.as_tuple()])
    corners = np.array([CORNERS[r] for r in ("compute", "bandwidth", "memory")])
    x, y = np.tensordot(np.moveaxis(np.asarray(w), 0, -1), corners, axes=1)
    return float(x), float(y)


class PoolEdge:
    """The two pool markers and the edge between them, on `plot`."""

    def __init__(self, plot: pg.PlotItem):
        self.edge = pg.PlotCurveItem(pen=pg.mkPen(theme.RESOURCE_COLORS["bandwidth"], width=5))
        self.markers = pg.ScatterPlotItem(pxMode=True, symbol="s", size=16,
                                          pen=pg.mkPen(theme.plot_text_color(), width=1.5))
        self.pools: PoolPoints | None = None
        # the edge under the workload markers (20) and their labels (22), the pools' squares over them
        for z, item in ((15, self.edge), (38, self.markers)):
            item.setZValue(z)
            item.setVisible(False)
            plot.addItem(item)

    def update(self, results: Results) -> None:
        self.pools = pool_points(results)
        shown = self.pools is not None
        if shown:
            ends = [_point(self.pools.prefill), _point(self.pools.decode)]
            self.edge.setData([e[0] for e in ends], [e[1] for e in ends])
            bindings = (self.pools.prefill_binding, self.pools.decode_binding)
            self.markers.setData([{"pos": e, "brush": pg.mkBrush(theme.RESOURCE_COLORS.get(b, theme.FALLBACK_COLOR)),
                                   "data": name} for e, b, name in zip(ends, bindings, ("prefill", "decode"),
                                                                       strict=True)])
        self.edge.setVisible(shown)
        self.markers.setVisible(shown)

    def obstacles(self) -> tuple[dict[str, tuple[float, float]], dict[str, float]]:
        """(positions, radii in px) the label placer keeps labels off: the two squares and points along the edge
        (keys that carry no label of their own); empty when aggregated."""
        if not self.edge.isVisible():
            return {}, {}
        (x0, y0), (x1, y1) = self.positions()
        points = {f"pool-edge:{i}": (x0 + (x1 - x0) * i / EDGE_SAMPLES, y0 + (y1 - y0) * i / EDGE_SAMPLES)
                  for i in range(EDGE_SAMPLES + 1)}
        radii = {k: 9.0 if k.endswith((":0", f":{EDGE_SAMPLES}")) else 4.0 for k in points}
        return points, radii

    def hover_points(self) -> dict[str, tuple[float, float]]:
        """The squares by hover key ("pool:prefill", "pool:decode"); empty when aggregated."""
        ends = self.positions()
        return {} if ends is None else {"pool:prefill": ends[0], "pool:decode": ends[1]}

    def hover_lines(self, key: str) -> list[tuple[str, bool]]:
        """The read-out of a pool's square: its pressures, its binding resource and the edge."""
        p = self.pools
        if p is None or key not in ("pool:prefill", "pool:decode"):
            return []
        name = key.split(":")[1]
        pressure, binding = (p.prefill, p.prefill_binding) if name == "prefill" else (p.decode, p.decode_binding)
        what = "one prompt per instance" if name == "prefill" else "the scenario's batch per instance"
        return [(f"{name.capitalize()} pool ({what})", True),
                (f"Compute {pressure.compute:.2f} · bandwidth {pressure.bandwidth:.2f} · memory {pressure.memory:.2f}",
                 False),
                (f"Binding resource: {theme.RESOURCE_LABELS.get(binding, binding)}", True),
                (f"Edge: {p.edge_text()}", False)]

    def caption(self) -> str:
        """The legend's sentence for the pools ("" when aggregated)."""
        if self.pools is None:
            return ""
        return (" Squares: the prefill pool and the decode pool, joined by the bandwidth edge, the "
                f"{self.pools.edge_text()}.")

    def positions(self) -> tuple[tuple[float, float], tuple[float, float]] | None:
        """(prefill, decode) positions drawn, or None."""
        if not self.markers.isVisible():
            return None
        xs, ys = self.markers.getData()
        return (float(xs[0]), float(ys[0])), (float(xs[1]), float(ys[1]))
