"""Chart titles that state the finding: one sentence per chart, computed from the numbers it draws.

Model-free on purpose: every function takes plain numbers and names (what the panel already computed) and
returns plain text, so each title is tested against computed values without building a panel. Units are
formatted by ui/units.py; a title never holds a number the chart does not draw.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from trinity_desktop.ui.units import fmt_bytes, fmt_seconds

RESOURCE_NAMES = {"compute": "compute", "bandwidth": "bandwidth", "memory": "memory"}


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _uncap(text: str) -> str:
    """'Compute efficiency' -> 'compute efficiency'; an acronym ('HBM efficiency') stays."""
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def ratio_words(a: float, b: float, more: str = "more", fewer: str = "fewer") -> str:
    """'3.1× fewer' when a < b, '2.0× more' when a > b, 'as many' when equal (a, b > 0)."""
    if a <= 0 or b <= 0 or a == b:
        return "as many"
    return f"{b / a:.1f}× {fewer}" if a < b else f"{a / b:.1f}× {more}"


def _lower_first(name: str) -> str:
    """A part's name inside a sentence: "Compute" → "compute", but "GEMMs (weights)", "KV cache" and "TP
    communication" keep their capitals (lower-casing them printed "gemms" and "kv cache" on slides)."""
    return name if len(name) > 1 and name[1].isupper() else name[:1].lower() + name[1:]


def memory_title(total_gb: float, capacity_gb: float, largest: str) -> str:
    """Memory and time: '59 of 80 GB per GPU: fits, activations largest' (or '274 of 80 GB ...: does not fit')."""
    verdict = "fits" if total_gb <= capacity_gb else "does not fit"
    return f"{total_gb:.0f} of {capacity_gb:.0f} GB per GPU: {verdict}, {_lower_first(largest)} largest"


def time_title(what: str, total_s: float, largest: str, largest_s: float) -> str:
    """Memory and time: 'Step time 41 s: compute takes 78%' (the largest stage and its share)."""
    if total_s <= 0 or not largest:
        return f"{what} {fmt_seconds(total_s)}"
    return f"{what} {fmt_seconds(total_s)}: {_lower_first(largest)} takes {largest_s / total_s:.0%}"


def bound_title(phase: str, bound: str, batch: str, seconds: float, per: str) -> str:
    """Roofline: 'Decode is HBM-bound at batch 16: 6.1 ms per token' (bound: the binding roof's name; batch:
    "batch 16", or "global batch 256" for a training step)."""
    return f"{_cap(phase)} is {bound}-bound at {batch}: {fmt_seconds(seconds)} per {per}"


def binding_count_title(bindings: Sequence[str], hardware: str) -> str:
    """Heatmap: 'Memory binds 5 of 8 workloads on H100' (the most common binding resource; ties by order)."""
    bound = [b for b in bindings if b]
    if not bound:
        return f"No workload evaluates on {hardware}"
    resource, count = Counter(bound).most_common(1)[0]
    return f"{_cap(RESOURCE_NAMES.get(resource, resource))} binds {count} of {len(bound)} workloads on {hardware}"


def triangle_title(binding: str, pressure: float, library: Sequence[str], hardware: str) -> str:
    """Triangle: 'Memory binds this scenario (1.24: does not fit); bandwidth binds 8 of 13 workloads on
    H100'."""
    here = ""
    if binding:
        detail = f"{pressure:.2f}: does not fit" if binding == "memory" and pressure > 1.0 else f"{pressure:.2f}"
        here = f"{_cap(binding)} binds this scenario ({detail})"   # "binds", as the status bar: "-bound" is the roofline's word
    bound = [b for b in library if b]
    if not bound:
        return here or f"No workload evaluates on {hardware}"
    resource, count = Counter(bound).most_common(1)[0]
    rest = f"{resource} binds {count} of {len(bound)} workloads on {hardware}"
    return f"{here}; {rest}" if here else _cap(rest)


def tiled_io_title(standard_bytes: float, flash_bytes: float, training: bool) -> str:
    """Attention IO: 'Tiling moves 3.1× fewer HBM bytes: 5.19 GB vs 16.3 GB per layer' (in inference: 'per
    layer of prefill', the prompt's N × N pass)."""
    scope = "per layer" if training else "per layer of prefill"
    return (f"Tiling moves {ratio_words(flash_bytes, standard_bytes)} HBM bytes: {fmt_bytes(flash_bytes)} vs "
            f"{fmt_bytes(standard_bytes)} {scope}")


def best_variant_title(variants: Sequence[tuple[str, float, bool]], baseline_s: float, baseline_fits: bool,
                       per: str) -> str:
    """Outcomes, from (name, seconds, fits) rows: the fastest variant that fits and what it changes against
    the baseline ('+ FlashAttention is fastest: 1.21 s per step, 8% less than baseline'; 'Baseline does not
    fit: + selective recompute is the fastest that does, 41.0 s per step'; 'No variant fits in memory here')."""
    fitting = [v for v in variants if v[2]]
    if not fitting:
        return "No variant fits in memory here"
    name, seconds, _ = min(fitting, key=lambda v: v[1])
    if not baseline_fits:
        return f"Baseline does not fit: {name} is the fastest that does, {fmt_seconds(seconds)} per {per}"
    head = f"{_cap(name)} is fastest: {fmt_seconds(seconds)} per {per}"
    if baseline_s <= 0 or abs(seconds - baseline_s) / baseline_s < 0.005:
        return head
    change = (seconds - baseline_s) / baseline_s
    return f"{head}, {abs(change):.0%} {'less' if change < 0 else 'more'} than baseline"


def split_title(where: str, objective: str, best: float, all_device: float, all_cloud: float) -> str:
    """Split computing: 'Split after conv5 is fastest: 38 ms, 3.4× less than all device' (objective
    "latency", values in s) or '... uses the least device energy: 12 mJ, ...' (objective "energy", in J)."""
    fmt = fmt_seconds if objective == "latency" else (lambda j: f"{j * 1e3:.3g} mJ")
    verb = "is fastest" if objective == "latency" else "uses the least device energy"
    head = f"{_cap(where)} {verb}: {fmt(best)}"
    other_name, other = ("all device", all_device) if all_device >= all_cloud else ("all cloud", all_cloud)
    if best <= 0 or other <= best * 1.005:
        return head
    return f"{head}, {other / best:.1f}× less than {other_name}"


def kv_policy_title(policy: str, kept_fraction: float, context: int) -> str:
    """KV matrix: 'H2O keeps 20% of 8,192 tokens'."""
    return f"{_cap(policy)} keeps {kept_fraction:.0%} of {context:,} tokens"


def sync_title(algorithm: str, ranks: int, total_s: float, bytes_by_link: dict[str, float]) -> str:
    """Gradient-sync matrix: 'Ring all-reduce over 16 ranks: 1.2 s, most bytes on scale-out (40 GB)'."""
    moved = {k: v for k, v in bytes_by_link.items() if v > 0}
    if ranks <= 1 or not moved:
        return f"{algorithm}: one rank, nothing to send"
    link, nbytes = max(moved.items(), key=lambda kv: kv[1])
    return f"{algorithm} over {ranks} ranks: {fmt_seconds(total_s)}, most bytes on {link} ({fmt_bytes(nbytes)})"


def residency_title(hbm_limit: float, axis_word: str, hbm_share: float, step_s: float, at: float) -> str:
    """Residency: 'KV cache stays in HBM up to 52.4k tokens; at 5,120: 100% in HBM, 12 ms per step'
    (hbm_limit: the largest x whose cache is all in HBM, 0 if none is; `at`: the marker's x, the request's
    end, whose step is longer than the average token's that Memory and time quotes)."""
    reach = (f"KV cache stays in HBM up to {count_text(hbm_limit)} {axis_word}" if hbm_limit > 0
             else f"KV cache never fits in HBM alone on this {axis_word} axis")
    return f"{reach}; at {count_text(at)}: {hbm_share:.0%} in HBM, {fmt_seconds(step_s)} per step"


def count_text(v: float) -> str:
    """A token or session count as on the log axes: 32k and 1M for powers of two, else 52,300."""
    if v >= 1 << 20 and v % (1 << 20) == 0:
        return f"{int(v) >> 20}M"
    if v >= 1024 and v % 1024 == 0:
        return f"{int(v) >> 10}k"
    return f"{v:,.0f}"


def storage_title(bits: Sequence[int], gb: Sequence[float], capacity_gb: float) -> str:
    """Quantisation storage: '16-bit weights take 6.43 of 8 GB; 4-bit 1.61 GB' (or '... do not fit in 8 GB')."""
    verb = f"take {gb[0]:.2f} of" if gb[0] <= capacity_gb else f"({gb[0]:.2f} GB) do not fit in"
    four = f"; 4-bit {gb[list(bits).index(4)]:.2f} GB" if 4 in bits else ""
    return f"{bits[0]}-bit weights {verb} {capacity_gb:.0f} GB{four}"


def speed_title(bits: Sequence[int], tokens_per_s: Sequence[float], meets: Sequence[bool], target_ms: int) -> str:
    """Quantisation speed: '8-bit is the widest to meet 100 ms per token: 12.5 tokens/s' (widest = most bits)."""
    ok = [i for i, m in enumerate(meets) if m]
    if not ok:
        return f"No width meets {target_ms} ms per token: {bits[-1]}-bit reaches {tokens_per_s[-1]:.3g} tokens/s"
    i = max(ok, key=lambda k: bits[k])
    return f"{bits[i]}-bit is the widest to meet {target_ms} ms per token: {tokens_per_s[i]:.3g} tokens/s"


def hierarchy_title(fast: str, fast_bw: float, fast_bytes: float, slow: str, slow_bw: float,
                    slow_bytes: float) -> str:
    """Memory hierarchy: 'HBM streams 479× faster than NVMe SSD, which holds 48× more' (bytes/s, bytes)."""
    if slow == fast or slow_bw <= 0 or fast_bytes <= 0:
        return f"{fast}: {fmt_bytes(fast_bytes)} at {fast_bw / 1e9:,.0f} GB/s"
    more = f"{slow_bytes / fast_bytes:.0f}× more" if slow_bytes > fast_bytes else f"{fast_bytes / slow_bytes:.0f}× less"
    return f"{fast} streams {fast_bw / slow_bw:,.0f}× faster than {slow}, which holds {more}"


def planner_title(best: str, training: bool, value: float, feasible: int, searched: int) -> str:
    """Planner: 'TP8 PP4 DP2 is fastest: 1.21 s per step (412 of 6,000 layouts fit)' (training: value in s);
    inference: '... serves the most: 950 tokens/s per GPU (...)' (value in tokens/s per GPU)."""
    if feasible == 0 or not best:
        return f"None of {searched:,} layouts fits"
    verdict = (f"is fastest: {fmt_seconds(value)} per step" if training
               else f"serves the most: {value:,.0f} tokens/s per GPU")
    return f"{best} {verdict} ({feasible:,} of {searched:,} layouts fit)"


def map_title(where: str, seconds: float, blank: int, cells: int) -> str:
    """Planner map: 'Best at PP 16, TP 2: 36.6 s per step; nothing fits in 21 of 49 cells'."""
    if not where:
        return f"Nothing fits in any of the {cells} cells"
    rest = f"; nothing fits in {blank} of {cells} cells" if blank else ""
    return f"Best at {where}: {fmt_seconds(seconds)} per step{rest}"


def validation_title(runs: int, median_error: float, inside: int) -> str:
    """Validation: 'Median error 18% over 14 published runs; 11 inside p05–p95' (median_error a fraction)."""
    return f"Median error {median_error:.0%} over {runs} published runs; {inside} inside p05–p95"


def sensitivity_title(what: str, top_name: str, top_share: float) -> str:
    """Validation: 'Step time depends most on HBM efficiency (total Sobol index 0.61)'."""
    return f"{_cap(what)} depends most on {_uncap(top_name)} (total Sobol index {top_share:.2f})"


def tradeoff_title(spent: str, saved: str, best: str, saved_pct: float, spent_pct: float, n: int) -> str:
    """Explorer: 'ZeRO-3 saves the most memory: −22% for +250% bandwidth' (n techniques apply here)."""
    if n == 0 or not best:
        return f"Nothing here spends {spent} to save {saved}"
    def signed(v: float) -> str:   # one minus sign, U+2212, in every number of the panel
        return f"{'+' if v >= 0 else '−'}{abs(v):.0f}%"

    return f"{best} saves the most {saved}: {signed(-saved_pct)} for {signed(spent_pct)} {spent}"


SHORT_REASON = 60   # characters: a longer reason is named by its first clause in the list (whole in the hover)


def not_drawn_text(entries: list[tuple[str, str]]) -> str:
    """The techniques that do not apply, from (name, reason) pairs, grouped by reason on whole lines: "Applies to
    prefill / decode workloads, not train: KV-cache quantisation, StreamingLLM, ...". Names lose their
    parenthesised detail and repeat once (FP8 and INT4 KV-cache quantisation are one entry); the hover has each
    in full."""
    groups: dict[str, list[str]] = {}
    for name, reason in entries:
        head = reason.strip().rstrip(".")
        if len(head) > SHORT_REASON:
            head = head.split(":")[0].split(". ")[0]
        head = head[:1].upper() + head[1:]   # each group starts a line
        short = name.split(" (")[0]
        names = groups.setdefault(head, [])
        if short not in names:
            names.append(short)
    return "\n".join(f"{head}: {', '.join(names)}." for head, names in groups.items())
