"""The cost and LoRA parts of the `calc` and `plan` reports (#23): `usd_per_million_tokens`,
`kwh_per_million_tokens` and `cost` when `--gpu-hour-price` is given (model/views/cost.py), `lora` when
`--lora-rank` is (model/formulas/lora.py), and their text lines. Without those options the reports are unchanged.
Imports no other CLI module.
"""

from __future__ import annotations

from trinity_desktop.model.formulas.lora import LORA_TARGET_CODE, adapter_params
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.cost import TokenCost, scenario_cost, token_cost

PLAN_LISTS = ("top", "pareto")


def cost_and_lora_json(results: Results) -> dict:
    """The report's extra keys for one evaluated scenario: cost with a price, lora with adapters, else none."""
    sc, out = results.scenario, {}
    if sc.gpu_hour_price > 0:
        out.update(scenario_cost(results).as_json())
    if results.kind == "train" and sc.lora_rank > 0:
        adapters = adapter_params(sc.model, sc.lora_rank, LORA_TARGET_CODE[sc.lora_targets])
        out["lora"] = {"rank": sc.lora_rank, "targets": sc.lora_targets, "qlora": sc.qlora,
                       "trainable_params": float(adapters.total), "frozen_params": results.params_total}
    return out


def _cost_line(cost: TokenCost) -> str:
    usd = f"${cost.usd_per_million_tokens:,.4g}" if cost.usd_per_million_tokens is not None else "no price"
    kwh = (f"{cost.kwh_per_million_tokens:,.4g} kWh at {cost.power_w:,.0f} W TDP per GPU (an upper bound)"
           if cost.kwh_per_million_tokens is not None else "no TDP published, no kWh")
    return f"  per 1M tokens     {usd} at ${cost.gpu_hour_price:g} per GPU-hour; {kwh}"


def cost_text(rep: dict) -> list[str]:
    """The text report's lines for the extra keys (empty without them)."""
    lines = []
    if "cost" in rep:
        c = rep["cost"]
        lines.append(_cost_line(TokenCost(c["tokens_per_s_per_gpu"], c["gpus"], c["gpu_hour_price_usd"],
                                          c["power_w_per_gpu"], rep["usd_per_million_tokens"],
                                          rep["kwh_per_million_tokens"])))
    if "lora" in rep:
        lo = rep["lora"]
        lines.append(f"  LoRA              rank {lo['rank']} on {lo['targets']}"
                     f"{' (QLoRA: NF4 base)' if lo['qlora'] else ''}: {lo['trainable_params'] / 1e6:,.2f} M "
                     f"trainable of {lo['frozen_params'] / 1e9:,.2f} B frozen")
    return lines


def add_plan_cost(rep: dict, gpu_hour_price: float, tdp_w: float) -> dict:
    """A plan report with each candidate's cost per million tokens at its tokens/s per GPU (idle budget GPUs
    included), when a price is given: the `best`, `top` and `pareto` entries gain usd_ and kwh_per_million_tokens."""
    if gpu_hour_price <= 0:
        return rep
    def priced(entry: dict) -> dict:
        c = token_cost(entry["tokens_per_s_per_gpu"], 1, gpu_hour_price, tdp_w)
        return {**entry, "usd_per_million_tokens": c.usd_per_million_tokens,
                "kwh_per_million_tokens": c.kwh_per_million_tokens}
    out = dict(rep, gpu_hour_price_usd=gpu_hour_price)
    if out.get("best"):
        out["best"] = priced(out["best"])
    for key in PLAN_LISTS:
        if key in out:
            out[key] = [priced(e) for e in out[key]]
    return out
