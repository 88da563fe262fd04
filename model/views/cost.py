"""Cost and energy per million tokens, training and serving alike. Vectorised; a typed result per scenario.

  usd_per_million_tokens = price per GPU-hour / 3600 / (tokens/s per GPU) x 1e6
  kwh_per_million_tokens = board power per GPU / (tokens/s per GPU) x 1e6 / 3.6e6 J per kWh

- The price of a GPU-hour is the user's input (`Scenario.gpu_hour_price`, `--gpu-hour-price`): no price is shipped
  as a fact; 0 means none was given and no dollar figure is reported.
- Board power is the preset's TDP (`Hardware.tdp_w`, each with its datasheet source in resources/hardware.toml)
  times BOARD_POWER_SHARE_OF_TDP = 1: an upper bound. Measured training draws less: an 8-GPU H100 node ran at 76% of
  its 10.2 kW rating under compute-intensive training (Newkirk et al. 2025, abstract; 8.4 kW peak in Latif et
  al.). Only the accelerators are counted: no host CPUs, network or cooling (PUE). No TDP published: no kWh.
- Tokens per second: training, the tokens of one step (global batch x sequence) over the step time
  (`Results.train["tokens_per_s"]`); serving, the tokens generated per second at the decode rate (batch / time per
  output token, `Results.infer["tokens_per_s"]`, the throughput the serving planner ranks by; prefill left out),
  both over every GPU of the scenario. The planners pass their own tokens/s per GPU (idle GPUs of a budget
  included).
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars
from trinity_desktop.model.base.numeric import as_float, safe_div
from trinity_desktop.model.step.evaluation import Results

SECONDS_PER_HOUR = 3600.0
JOULES_PER_KWH = 3.6e6
PER_MILLION = 1e6
BOARD_POWER_SHARE_OF_TDP = 1.0  # TDP as the upper bound of board power (module docstring)


def usd_per_million_tokens(gpu_hour_price, tokens_per_s_per_gpu):
    """Dollars per million tokens: the price of a GPU-second over the tokens one GPU makes in it."""
    return safe_div(xp.asarray(gpu_hour_price, dtype=float) / SECONDS_PER_HOUR * PER_MILLION, tokens_per_s_per_gpu)


def kwh_per_million_tokens(power_w, tokens_per_s_per_gpu):
    """kWh per million tokens: joules per token (watts / tokens per second) x 1e6 / 3.6e6."""
    return safe_div(xp.asarray(power_w, dtype=float) * PER_MILLION / JOULES_PER_KWH, tokens_per_s_per_gpu)


@dataclass(frozen=True)
class TokenCost:
    """One deployment's cost and energy per million tokens; None where the price or the TDP is not known."""

    tokens_per_s_per_gpu: float
    gpus: int
    gpu_hour_price: float          # dollars per GPU-hour, the user's input (0 = none)
    power_w: float                 # per GPU: TDP x BOARD_POWER_SHARE_OF_TDP (0 = no TDP published)
    usd_per_million_tokens: float | None
    kwh_per_million_tokens: float | None

    @property
    def usd_per_hour(self) -> float:
        return self.gpu_hour_price * self.gpus

    @property
    def kw(self) -> float:
        return self.power_w * self.gpus / 1e3

    def as_json(self) -> dict:
        """The CLI's keys: both per-million figures (null where not known) and what they rest on."""
        return {"usd_per_million_tokens": self.usd_per_million_tokens,
                "kwh_per_million_tokens": self.kwh_per_million_tokens,
                "cost": {"gpu_hour_price_usd": self.gpu_hour_price, "gpus": self.gpus,
                         "usd_per_hour": self.usd_per_hour, "power_w_per_gpu": self.power_w,
                         "power_basis": "TDP (an upper bound; accelerators only, no host or cooling)",
                         "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu}}


def token_cost(tokens_per_s_per_gpu: float, gpus: int, gpu_hour_price: float, tdp_w: float) -> TokenCost:
    """The typed cost of `gpus` GPUs making `tokens_per_s_per_gpu` each, at a price and a TDP (0 = unknown)."""
    power = float(tdp_w) * BOARD_POWER_SHARE_OF_TDP
    usd = as_float(usd_per_million_tokens(gpu_hour_price, tokens_per_s_per_gpu)) if gpu_hour_price > 0 else None
    kwh = as_float(kwh_per_million_tokens(power, tokens_per_s_per_gpu)) if power > 0 else None
    return TokenCost(tokens_per_s_per_gpu=float(tokens_per_s_per_gpu), gpus=int(gpus),
                     gpu_hour_price=float(gpu_hour_price), power_w=power, usd_per_million_tokens=usd,
                     kwh_per_million_tokens=kwh)


def scenario_cost(results: Results) -> TokenCost:
    """A scenario's cost per million tokens (module docstring): training tokens per step over the step time,
    serving tokens generated at the decode rate, over the scenario's GPUs."""
    sc = results.scenario
    tokens_per_s = results.train["tokens_per_s"] if results.kind == "train" else results.infer["tokens_per_s"]
    return token_cost(tokens_per_s / sc.gpus, sc.gpus, sc.gpu_hour_price, sc.hardware.tdp_w)
