"""The techniques catalogue (resources/techniques.toml) as computed moves in the compute/bandwidth/memory space.

Each technique spends one resource to relieve another (Fan, Weng, Li, arXiv 2601.11577: "more computation ->
less bandwidth, more bandwidth -> less memory, more memory -> less computation", and the reverses). A
technique is a Scenario transform (field changes, integer scalings, or an Architecture change); its effect
is `evaluate(after) - evaluate(before)`, never an asserted number.

The measure of each resource, defined once (`resource_measures`):

  compute    hardware FLOPs per step (training, with recomputation) or per prefill / output token
             (inference): `Results.flops` (Korthikanti et al. 2022 Eq. 8 for training)
  bandwidth  link occupancy: sum over links of bytes moved per GPU / the link's datasheet bandwidth, in
             seconds (HBM, scale-up, scale-out, host link, and NVMe where ZeRO-Infinity moves bytes to it). Bytes on a 50 GB/s NIC and on 3.35 TB/s HBM are
             not the same cost, so they are weighted by the time they hold their link (the alpha-beta
             model's beta term; mpich-collectives)
  memory     HBM bytes required per device: `Results.memory_total` (ZeRO §3 model states + activations,
             or weights + KV cache + reserve in inference)

`saved_pct` is the percent decrease of the saved resource's measure, `spent_pct` the percent increase of the
spent resource's measure (both signed: a negative spend means the technique also relieved that resource).
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources as _resources
from types import MappingProxyType

import numpy as np

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.base.numeric import safe_div
from trinity_desktop.model.formulas.pressure import RESOURCES, Pressure, binding_resource
from trinity_desktop.model.formulas.sparse_attention import (
    nsa_extra_cached,
    nsa_keys_read,
    strided_keys_read,
    strided_stride,
)
from trinity_desktop.model.inputs.scenario import WORKLOAD_KINDS, Scenario
from trinity_desktop.model.step.evaluation import Results, evaluate

RESOURCE_PACKAGE = "trinity_desktop.resources"
LINK_NAMES = ("hbm", "scale-up", "scale-out", "host")


_KNOWN_KEYS = {"key", "name", "spent", "saved", "citation", "relevance", "relevance_basis", "kinds", "set",
               "scale", "model_set", "model_scale", "requires", "requires_min", "modelled", "reason", "note",
               "read_pattern"}
READ_PATTERNS = ("nsa", "strided")  # sparse attention that keeps every key and reads a subset (read_pattern)
_SCENARIO_FIELDS = {f.name for f in dataclasses.fields(Scenario)} - {"hardware", "model", "efficiency",
                                                                      "techniques"}
_SCENARIO_PROPERTIES = {"dp", "micro_batches"}
# A requirement's field as the Scenario form names it (user text carries no field names).
_FIELD_WORDS = {"dp": "data parallelism", "micro_batch": "the micro-batch", "zero": "the ZeRO stage",
                "kv_policy": "the KV cache policy", "kv_offload_fraction": "the KV offload share"}


def _words(name: str) -> str:
    return _FIELD_WORDS.get(name, name.replace("_", " "))


def direction_label(spent: str, saved: str) -> str:
    """'spend compute → save memory'."""
    return f"spend {spent} → save {saved}"


DIRECTIONS = tuple((s, v) for s in RESOURCES for v in RESOURCES if s != v)


@dataclass(frozen=True)
class Technique:
    key: str
    name: str
    spent: str
    saved: str
    citation: str
    relevance: float
    relevance_basis: str
    kinds: tuple[str, ...]
    set: Mapping[str, object] = field(default_factory=dict)
    scale: Mapping[str, float] = field(default_factory=dict)
    model_set: Mapping[str, object] = field(default_factory=dict)
    model_scale: Mapping[str, float] = field(default_factory=dict)   # Architecture integer fields x factor
    requires: Mapping[str, object] = field(default_factory=dict)
    requires_min: Mapping[str, float] = field(default_factory=dict)
    modelled: bool = True
    reason: str = ""
    note: str = ""
    read_pattern: str = ""   # "nsa" or "strided": the keys read per query differ from the tokens kept

    def __post_init__(self):
        for name in ("set", "scale", "model_set", "model_scale", "requires", "requires_min"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        object.__setattr__(self, "kinds", tuple(self.kinds))

    @property
    def direction(self) -> tuple[str, str]:
        """(spent, saved)."""
        return (self.spent, self.saved)


def _technique_from_dict(entry: Mapping, where: str) -> Technique:
    key = str(entry.get("key", ""))
    where = f"{where} [{key or 'unnamed'}]"
    unknown = set(entry) - _KNOWN_KEYS
    if unknown:
        raise ValidationError(where, sorted(unknown), "technique keys: " + ", ".join(sorted(_KNOWN_KEYS)))
    for name in ("key", "name", "spent", "saved", "citation", "relevance", "relevance_basis", "kinds"):
        if name not in entry:
            raise ValidationError(f"{where}.{name}", None, "a required technique key")
    spent, saved = entry["spent"], entry["saved"]
    if spent not in RESOURCES or saved not in RESOURCES or spent == saved:
        raise ValidationError(f"{where}.spent/saved", (spent, saved), "two different resources of "
                              + ", ".join(RESOURCES))
    rel = entry["relevance"]
    if isinstance(rel, bool) or not isinstance(rel, (int, float)) or not 0.0 <= rel <= 1.0:
        raise ValidationError(f"{where}.relevance", rel, "a number from 0 to 1")
    kinds = entry["kinds"]
    if not kinds or any(k not in WORKLOAD_KINDS for k in kinds):
        raise ValidationError(f"{where}.kinds", kinds, "a non-empty list of " + ", ".join(WORKLOAD_KINDS))
    for table in ("set", "scale", "requires", "requires_min"):
        bad = set(entry.get(table, {})) - _SCENARIO_FIELDS - (_SCENARIO_PROPERTIES if table.startswith("req")
                                                              else set())
        if bad:
            raise ValidationError(f"{where}.{table}", sorted(bad), "Scenario field names")
    for table in ("scale", "model_scale"):
        for name, factor in entry.get(table, {}).items():
            if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor > 0:
                raise ValidationError(f"{where}.{table}.{name}", factor, "a positive factor")
    modelled = bool(entry.get("modelled", True))
    pattern = str(entry.get("read_pattern", ""))
    if pattern and pattern not in READ_PATTERNS:
        raise ValidationError(f"{where}.read_pattern", pattern, "one of " + ", ".join(READ_PATTERNS))
    if modelled and not pattern and not (entry.get("set") or entry.get("scale") or entry.get("model_set")
                         or entry.get("model_scale")):
        raise ValidationError(f"{where}.set", None, "a transform (set, scale, model_set or model_scale) when "
                              "modelled")
    if not modelled and not entry.get("reason"):
        raise ValidationError(f"{where}.reason", None, "a reason when modelled = false")
    return Technique(key=key, name=str(entry["name"]), spent=spent, saved=saved, citation=str(entry["citation"]),
                     relevance=float(rel), relevance_basis=str(entry["relevance_basis"]), kinds=tuple(kinds),
                     set=entry.get("set", {}), scale=entry.get("scale", {}), model_set=entry.get("model_set", {}),
                     model_scale=entry.get("model_scale", {}),
                     requires=entry.get("requires", {}), requires_min=entry.get("requires_min", {}),
                     modelled=modelled, reason=str(entry.get("reason", "")), note=str(entry.get("note", "")),
                     read_pattern=pattern)


def parse_techniques(text: str, where: str = "techniques.toml") -> dict[str, Technique]:
    """Parse a techniques TOML document; a bad entry raises ValidationError naming it and the key."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValidationError(where, "TOML", str(exc)) from None
    out: dict[str, Technique] = {}
    for i, entry in enumerate(doc.get("technique", [])):
        t = _technique_from_dict(entry, f"{where} #{i + 1}")
        if t.key in out:
            raise ValidationError(f"{where} #{i + 1}.key", t.key, "a key not used by another technique")
        out[t.key] = t
    return out


@cache
def load_techniques() -> dict[str, Technique]:
    """The catalogue of resources/techniques.toml, in file order."""
    text = _resources.files(RESOURCE_PACKAGE).joinpath("techniques.toml").read_text(encoding="utf-8")
    return parse_techniques(text)


def techniques_in_direction(spent: str, saved: str) -> list[Technique]:
    return [t for t in load_techniques().values() if t.direction == (spent, saved)]


def _get(technique: str | Technique) -> Technique:
    if isinstance(technique, Technique):
        return technique
    catalogue = load_techniques()
    if technique not in catalogue:
        raise ValidationError("technique", technique, "one of " + ", ".join(catalogue))
    return catalogue[technique]


def read_keys(pattern: str, sc: Scenario) -> float:
    """Keys one decode query reads under `pattern` at the request's mean context s + g/2 (NSA §4.1's
    configuration; the Sparse Transformer's stride √(s + g)): formulas/sparse_attention.py."""
    ctx = sc.prompt_len + sc.gen_len / 2.0
    if pattern == "nsa":
        return float(nsa_keys_read(ctx))
    return float(strided_keys_read(ctx, strided_stride(sc.prompt_len + sc.gen_len)))


def _read_pattern_changes(t: Technique, sc: Scenario) -> dict:
    """A read pattern in the core: every layer attends to W = read_keys(...) keys per decode query. Above the
    prompt both patterns read a number of keys linear in the context, so the core's decode step (at s + g/2) and
    its request mean (over s ... s + g) are exact; the KV cache the pattern keeps is restored by
    `evaluate_applied`."""
    keys = int(round(read_keys(t.read_pattern, sc)))
    label = "NSA" if t.read_pattern == "nsa" else "strided sparse"
    model = dataclasses.replace(sc.model, sliding_window=keys, global_layers=0,
                                name=f"{sc.model.name} ({label}: {keys} keys read per query)")
    return {"model": model}


def _read_pattern_in_effect(sc: Scenario) -> Technique | None:
    catalogue = load_techniques()
    found = [catalogue[k] for k in sc.techniques if k in catalogue and catalogue[k].read_pattern]
    return found[-1] if found else None


def evaluate_applied(sc: Scenario) -> Results:
    """`evaluate(sc)`, with the KV cache a read pattern keeps (every token, plus NSA's compressed and window
    branches' own keys and values, Yuan et al. 2025 §3.3.3) where one of `sc.techniques` is a read pattern;
    pressures and the binding resource follow the restored memory (formulas/pressure.py)."""
    r = evaluate(sc)
    t = _read_pattern_in_effect(sc)
    if t is None:
        return r
    full = evaluate(sc.replace(model=dataclasses.replace(sc.model, sliding_window=0, global_layers=0)))
    end = sc.prompt_len + sc.gen_len
    extra = float(nsa_extra_cached(end)) / end if t.read_pattern == "nsa" else 0.0
    kv = full.memory["kv_cache"] * (1.0 + extra)
    total = r.memory_total - r.memory["kv_cache"] + kv
    pressure = Pressure(r.pressure.compute, r.pressure.bandwidth, total / r.capacity)
    return dataclasses.replace(r, memory={**r.memory, "kv_cache": kv}, memory_total=total,
                               fits=total <= r.capacity, pressure=pressure,
                               bottleneck=binding_resource(*pressure.as_tuple()))


def _changes(t: Technique, sc: Scenario) -> dict:
    """Scenario field changes of `t` on `sc` (raises ValidationError when a scaled field stops being whole)."""
    if t.read_pattern:
        return _read_pattern_changes(t, sc)
    changes = dict(t.set)
    for name, factor in t.scale.items():
        target = name
        if name == "tp" and sc.kind != "train":
            target = "gpus"  # inference: tensor parallelism spans every GPU of the scenario
        value = getattr(sc, target) * factor
        if abs(value - round(value)) > 1e-9 or round(value) < 1:
            raise ValidationError(target, value, f"a whole number (scaling {getattr(sc, target)} by {factor})")
        changes[target] = int(round(value))
    if t.model_set or t.model_scale:
        m = sc.model
        model_changes = dict(t.model_set)
        for name, factor in t.model_scale.items():
            value = getattr(m, name) * factor
            if abs(value - round(value)) > 1e-9 or round(value) < 1:
                raise ValidationError(f"model.{name}", value, f"a whole number (scaling {getattr(m, name)} by "
                                      f"{factor})")
            model_changes[name] = int(round(value))
        suffix = ", ".join(f"{k} = {v}" for k, v in model_changes.items())
        if model_changes.get("attention") == "mla":
            model_changes = _mla_fields(m, model_changes)
        changes["model"] = dataclasses.replace(m, **model_changes, name=f"{m.name} ({suffix})")
    return changes


def _mla_fields(m, model_set: Mapping) -> dict:
    """MLA transplanted onto a multi-head / grouped-query model (deepseek-v3: a KV latent of kv_lora_rank = 512
    plus a decoupled RoPE key of qk_rope_head_dim = 64 per token per layer). Each head keeps its query/key
    width (no-RoPE part = head_dim - qk_rope_head_dim) and its value width (head_dim), so attention FLOPs per
    token are unchanged; queries are projected directly (q_lora_rank = 0). The parameter count changes with
    the projections: W_DKV (h x (r + d_rope)) and W_UK, W_UV (r x heads·(d_nope + d_v)) replace W_K, W_V."""
    out = dict(model_set)
    rope = int(out.get("qk_rope_head_dim", 64))
    if m.head_dim <= rope:
        raise ValidationError("model.head_dim", m.head_dim, f"more than the {rope} RoPE dimensions MLA decouples")
    out.setdefault("qk_nope_head_dim", m.head_dim - rope)
    out.setdefault("v_head_dim", m.head_dim)
    out.setdefault("q_lora_rank", 0)
    return out


def _transformed(t: Technique, sc: Scenario) -> Scenario:
    return sc.replace(**_changes(t, sc))


def applicable(technique: str | Technique, scenario: Scenario) -> tuple[bool, str]:
    """(True, "") when `technique` can be applied to `scenario` (and the result carried as a scenario: CLI, main
    window), else (False, why). A read pattern is computed through `previewable` and `evaluate_applied` only."""
    t = _get(technique)
    ok, reason = previewable(t, scenario)
    if ok and t.read_pattern:
        return False, ("Computed in the trade-off explorer and on the triangle only: a scenario has one attention "
                       "span for the keys kept and the keys read, so the read pattern is not carried by it.")
    return ok, reason


def previewable(technique: str | Technique, scenario: Scenario) -> tuple[bool, str]:
    """`applicable`, with read patterns allowed: what `apply` accepts and the explorer, the triangle and the claims
    compute through `evaluate_applied`."""
    t = _get(technique)
    if not t.modelled:
        return False, f"Not modelled yet: {t.reason}"
    if scenario.kind not in t.kinds:
        return False, f"Applies to {' / '.join(t.kinds)} workloads, not {scenario.kind}."
    for name, value in t.requires.items():
        if getattr(scenario, name) != value:
            return False, f"Needs {_words(name)} = {value} (this scenario has {getattr(scenario, name)})."
    for name, value in t.requires_min.items():
        if getattr(scenario, name) < value:
            return False, f"Needs {_words(name)} ≥ {value} (this scenario has {getattr(scenario, name)})."
    if scenario.model.attention == "mla" and "kv_heads" in t.model_set:
        return False, "The model uses MLA (a compressed latent KV cache); KV heads do not apply."
    if scenario.model.attention == "mla" and t.model_set.get("attention") == "mla":
        return False, "Already in effect: the model uses MLA."
    if "kv_heads" in t.model_set and scenario.model.kv_heads <= t.model_set["kv_heads"]:
        return False, f"The model already has {scenario.model.kv_heads} KV head(s)."
    in_effect = _read_pattern_in_effect(scenario)
    if in_effect is not None and (t.read_pattern or "sliding_window" in t.model_set):
        return False, f"{in_effect.name} already sets the keys each query reads."
    if t.read_pattern:
        if scenario.model.sliding_window:
            return False, "The model already has a sliding window."
        keys = read_keys(t.read_pattern, scenario)
        if keys >= scenario.prompt_len:
            return False, (f"At a {scenario.prompt_len}-token prompt the pattern reads {keys:.0f} keys per query, "
                           "no fewer than full attention.")
    try:
        after = _transformed(t, scenario)
    except ValidationError as exc:
        return False, f"Not valid here: {exc}"
    if after == scenario:
        return False, "Already in effect in this scenario."
    return True, ""


def apply(technique: str | Technique, scenario: Scenario) -> Scenario:
    """The scenario with `technique` applied (its key appended to `techniques`); ValidationError if not
    `previewable`. A read pattern's result is evaluated with `evaluate_applied`, and `applicable` refuses to carry
    it (the CLI and the main window check `applicable` first)."""
    t = _get(technique)
    ok, reason = previewable(t, scenario)
    if not ok:
        raise ValidationError("technique", t.key, reason)
    return _transformed(t, scenario).replace(techniques=(*scenario.techniques, t.key))


def link_bandwidths(hardware) -> dict[str, float]:
    """Datasheet bandwidth per link (bytes/s), keyed like `Results.bytes_by_link`."""
    return {"hbm": hardware.hbm_bw, "scale-up": hardware.scaleup_bw, "scale-out": hardware.scaleout_bw,
            "host": hardware.host_link_bw}


def resource_measures(flops, link_bytes: Mapping[str, object], link_bw: Mapping[str, float], memory):
    """(compute, bandwidth, memory) measures; broadcasts over arrays in every argument.

    compute = hardware FLOPs; bandwidth = Σ_link bytes_link / bandwidth_link (seconds of link occupancy at
    datasheet bandwidth, the alpha-beta model's beta term: mpich-collectives); memory = HBM bytes per device.
    A link with no bandwidth contributes nothing (it carries no bytes in the model)."""
    occupancy = sum(safe_div(np.asarray(link_bytes.get(k, 0.0), dtype=float), float(link_bw.get(k, 0.0)))
                    for k in (*LINK_NAMES, "nvme"))
    return np.asarray(flops, dtype=float), np.asarray(occupancy, dtype=float), np.asarray(memory, dtype=float)


def _link_bytes_and_bw(results: Results) -> tuple[dict, dict]:
    """bytes_by_link and datasheet bandwidths, plus the NVMe link where ZeRO-Infinity moves bytes over it."""
    link_bytes, bw = dict(results.bytes_by_link), link_bandwidths(results.scenario.hardware)
    nvme = _nvme_traffic(results)
    if nvme > 0:
        link_bytes["nvme"], bw["nvme"] = nvme, results.scenario.hardware.nvme_bw
    return link_bytes, bw


def measures_of(results: Results) -> dict[str, float]:
    link_bytes, bw = _link_bytes_and_bw(results)
    c, b, m = resource_measures(results.flops, link_bytes, bw, results.memory_total)
    return {"compute": float(c), "bandwidth": float(b), "memory": float(m)}


def percent_change(before, after):
    """100 · (after − before) / before, 0 where before is 0. Broadcasts."""
    before, after = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    return 100.0 * safe_div(after - before, before)


@dataclass(frozen=True)
class Effect:
    """Before/after of one technique on one scenario. Deltas are after − before, SI units."""

    key: str
    spent: str
    saved: str
    applicable: bool
    reason: str
    before: Results
    after: Results | None
    d_flops: float = 0.0
    d_compute_time: float = 0.0          # FLOP-bound seconds: pressure.compute × time_total
    d_time: float = 0.0                  # step time / time per token or prefill
    d_bytes: Mapping[str, float] = field(default_factory=dict)    # per link, bytes per GPU (+ "nvme" if used)
    d_memory: Mapping[str, float] = field(default_factory=dict)   # "hbm" per device, "host" (+ "nvme") per GPU
    d_pressure: tuple[float, float, float] = (0.0, 0.0, 0.0)
    measures_before: Mapping[str, float] = field(default_factory=dict)
    measures_after: Mapping[str, float] = field(default_factory=dict)
    pct_change: Mapping[str, float] = field(default_factory=dict)  # per resource measure, signed
    saved_pct: float = 0.0
    spent_pct: float = 0.0

    def __post_init__(self):
        for name in ("d_bytes", "d_memory", "measures_before", "measures_after", "pct_change"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))


def _host_bytes(r: Results) -> float:
    """Bytes per GPU held in host DRAM: offloaded training state, or the offloaded share of the KV cache."""
    return float(r.train.get("host_bytes", 0.0)) + float(r.infer.get("kv_host_bytes", 0.0))


def _nvme_bytes(r: Results) -> float:
    return float(r.train.get("nvme_bytes", 0.0))


def _nvme_traffic(r: Results) -> float:
    return float(r.train.get("nvme_traffic_bytes", 0.0))


def effect_between(before: Results, after: Results, technique: Technique) -> Effect:
    """The Effect of going from `before` to `after`, read in `technique`'s direction."""
    mb, ma = measures_of(before), measures_of(after)
    pct = {r: float(percent_change(mb[r], ma[r])) for r in RESOURCES}
    links = sorted(set(before.bytes_by_link) | set(after.bytes_by_link), key=lambda k: (LINK_NAMES.index(k) if k in LINK_NAMES else len(LINK_NAMES), k))
    d_bytes = {k: after.bytes_by_link.get(k, 0.0) - before.bytes_by_link.get(k, 0.0) for k in links}
    if _nvme_traffic(before) > 0 or _nvme_traffic(after) > 0:
        d_bytes["nvme"] = _nvme_traffic(after) - _nvme_traffic(before)
    d_memory = {"hbm": after.memory_total - before.memory_total, "host": _host_bytes(after) - _host_bytes(before)}
    if _nvme_bytes(before) > 0 or _nvme_bytes(after) > 0:
        d_memory["nvme"] = _nvme_bytes(after) - _nvme_bytes(before)
    cxl_before, cxl_after = (float(r.infer.get("kv_cxl_bytes", 0.0)) for r in (before, after))
    if cxl_before > 0 or cxl_after > 0:
        d_memory["cxl"] = cxl_after - cxl_before
    return Effect(
        key=technique.key, spent=technique.spent, saved=technique.saved, applicable=True, reason="",
        before=before, after=after, d_flops=after.flops - before.flops,
        d_compute_time=after.pressure.compute * after.time_total - before.pressure.compute * before.time_total,
        d_time=after.time_total - before.time_total,
        d_bytes=d_bytes, d_memory=d_memory,
        d_pressure=tuple(a - b for a, b in zip(after.pressure.as_tuple(), before.pressure.as_tuple(), strict=True)),
        measures_before=mb, measures_after=ma, pct_change=pct,
        saved_pct=-pct[technique.saved], spent_pct=pct[technique.spent])


def technique_effect(scenario: Scenario, key: str, before: Results | None = None) -> Effect:
    """Evaluate `scenario` before and after applying technique `key`. Not applicable (or not modelled):
    an Effect with applicable=False, the reason, and zero deltas (no number is made up)."""
    t = _get(key)
    before = before if before is not None else evaluate_applied(scenario)
    ok, reason = previewable(t, scenario)
    if not ok:
        return Effect(key=t.key, spent=t.spent, saved=t.saved, applicable=False, reason=reason, before=before,
                      after=None, measures_before=measures_of(before))
    return effect_between(before, evaluate_applied(apply(t, scenario)), t)


def path(scenario: Scenario, keys: Sequence[str], skip_inapplicable: bool = False) -> list[tuple[Scenario, Results]]:
    """[(scenario, results)] starting with `scenario`, then after each technique in `keys`, in order.

    A technique that is not applicable at its turn raises ValidationError, or is left out when
    `skip_inapplicable` (the path then has fewer than len(keys) + 1 points)."""
    out = [(scenario, evaluate_applied(scenario))]
    current = scenario
    for key in keys:
        t = _get(key)
        ok, reason = previewable(t, current)
        if not ok:
            if skip_inapplicable:
                continue
            raise ValidationError("technique", key, reason)
        current = apply(t, current)
        out.append((current, evaluate_applied(current)))
    return out
