"""The layout of disaggregated serving (#23): a prefill pool and a decode pool of a scenario, each made of
instances with their own TP x PP, the link the KV cache crosses between them, and the rules a layout must follow.

A pool's TP or PP of 0 means the scenario's replica layout (TP = gpus / pp, pp). The pool's instances are
pool GPUs / (TP x PP), a whole number. The KV link: scale-up (NVLink) when one prefill and one decode instance fit
in one node together (DistServe §4.2: paired instances inside a node), else scale-out; `kv_transfer_link` may force
either, when the hardware has it.
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.base.errors import MissingLinkError, ValidationError

KV_TRANSFER_LINKS = ("auto", "scale-up", "scale-out")


@dataclass(frozen=True)
class PoolLayout:
    """One pool: its GPUs, the TP x PP of each instance, and how many instances it holds."""

    gpus: int
    tp: int
    pp: int

    @property
    def instance_gpus(self) -> int:
        return self.tp * self.pp

    @property
    def instances(self) -> int:
        return self.gpus // self.instance_gpus


@dataclass(frozen=True)
class DisaggregatedLayout:
    prefill: PoolLayout
    decode: PoolLayout
    link: str  # "scale-up" or "scale-out": the one the KV cache crosses

    @property
    def gpus(self) -> int:
        return self.prefill.gpus + self.decode.gpus


def is_disaggregated(sc) -> bool:
    """Whether a serving scenario splits prefill and decode into pools (a pool size set; training ignores them)."""
    return sc.kind != "train" and (sc.prefill_gpus > 0 or sc.decode_gpus > 0)


def disaggregated_layout(sc) -> DisaggregatedLayout:
    """The pools of a disaggregated scenario, its defaults filled in and the KV link chosen."""
    tp, pp = sc.gpus // sc.pp, sc.pp
    prefill = PoolLayout(sc.prefill_gpus, sc.prefill_tp or tp, sc.prefill_pp or pp)
    decode = PoolLayout(sc.decode_gpus, sc.decode_tp or tp, sc.decode_pp or pp)
    return DisaggregatedLayout(prefill, decode, _link(sc, prefill, decode))


def _link(sc, prefill: PoolLayout, decode: PoolLayout) -> str:
    if sc.kv_transfer_link != "auto":
        return sc.kv_transfer_link
    pair_in_node = prefill.instance_gpus + decode.instance_gpus <= sc.gpus_per_node
    return "scale-up" if pair_in_node and sc.hardware.scaleup_bw > 0 else "scale-out"


def check_disaggregation(sc) -> None:
    """Refuse a disaggregated layout that cannot run, naming the field: both pools set, inference only, whole
    instances, heads and layers divided, and a link for the KV cache."""
    if not is_disaggregated(sc):
        return
    for name in ("prefill_gpus", "decode_gpus"):
        if getattr(sc, name) == 0:
            raise ValidationError(name, 0, "a GPU count from 1 when the other pool is set (disaggregated serving "
                                           "needs a prefill pool and a decode pool)")
    lay, m = disaggregated_layout(sc), sc.model
    for phase, pool in (("prefill", lay.prefill), ("decode", lay.decode)):
        if m.heads % pool.tp:
            raise ValidationError(f"{phase}_tp", pool.tp, f"a divisor of the model's {m.heads} heads")
        if m.layers % pool.pp:
            raise ValidationError(f"{phase}_pp", pool.pp, f"a divisor of the model's {m.layers} layers")
        if pool.gpus % pool.instance_gpus:
            raise ValidationError(f"{phase}_gpus", pool.gpus, f"a multiple of the {phase} instance's TP x PP = "
                                                              f"{pool.instance_gpus}")
    hw = sc.hardware
    if lay.link == "scale-up" and (hw.scaleup_bw <= 0 or lay.prefill.instance_gpus + lay.decode.instance_gpus
                                   > sc.gpus_per_node):
        allowed = (f"scale-out or auto: a prefill and a decode instance ({lay.prefill.instance_gpus} + "
                   f"{lay.decode.instance_gpus} GPUs) must share one NVLink node of {sc.gpus_per_node} for scale-up "
                   f"({hw.name} ")
        if hw.scaleup_bw > 0:
            raise ValidationError("kv_transfer_link", sc.kv_transfer_link,
                                  allowed + f"scale-up {hw.scaleup_bw / 1e9:g} GB/s)")
        raise MissingLinkError("kv_transfer_link", sc.kv_transfer_link, allowed + "scaleup_bw is absent)",
                               "scaleup_bw", f"{hw.name} has no scale-up link: scaleup_bw is absent")
    if lay.link == "scale-out" and hw.scaleout_bw <= 0:
        why = f"{hw.name} has no link between the pools (scaleout_bw is absent, and the pair does not fit one " \
              "scale-up node)"
        raise MissingLinkError("prefill_gpus", sc.prefill_gpus, f"0: {why}", "scaleout_bw", why)
