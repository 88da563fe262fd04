"""Where a disaggregated deployment's two pools sit on the triangle (#23): the prefill instance and the decode
instance of `step.disaggregated.pool_scenarios`, each evaluated as its own scenario (its pressures, the same
numbers as everywhere), and the KV transfer that joins them, the edge the triangle draws in the bandwidth colour.
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.formulas.pressure import Pressure
from trinity_desktop.model.step.disaggregated import pool_scenarios
from trinity_desktop.model.step.evaluation import Results, evaluate


@dataclass(frozen=True)
class PoolPoints:
    prefill: Pressure          # the prefill instance's pressures (one prompt)
    decode: Pressure           # the decode instance's pressures (the scenario's batch)
    prefill_binding: str
    decode_binding: str
    kv_transfer_bytes: float   # one request's KV cache, whole model
    kv_transfer_s: float
    kv_transfer_exposed_s: float
    link: str                  # "scale-up" or "scale-out"

    def edge_text(self) -> str:
        """The edge in words: what each request sends from pool to pool, and how long it takes."""
        hidden = "" if self.kv_transfer_exposed_s >= self.kv_transfer_s else \
            f", {self.kv_transfer_exposed_s * 1e3:,.2f} ms of it exposed"
        return (f"KV cache {self.kv_transfer_bytes / 1e9:,.2f} GB per request in {self.kv_transfer_s * 1e3:,.2f} ms "
                f"over {self.link}{hidden}")


def pool_points(results: Results) -> PoolPoints | None:
    """The pools of a disaggregated scenario's results (None when it is aggregated)."""
    d = results.disaggregated
    if d is None:
        return None
    p, q = (evaluate(sc) for sc in pool_scenarios(results.scenario))
    s = d.served
    return PoolPoints(prefill=p.pressure, decode=q.pressure, prefill_binding=p.bottleneck,
                      decode_binding=q.bottleneck, kv_transfer_bytes=float(s.kv_transfer_bytes),
                      kv_transfer_s=float(s.kv_transfer_s), kv_transfer_exposed_s=float(s.kv_transfer_exposed_s),
                      link=d.layout.link)
