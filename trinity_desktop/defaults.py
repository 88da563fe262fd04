"""The scenario the app opens with: Llama-3-70B training on 64 H100s (TP8 x PP2 x DP4, ZeRO-1)."""

from __future__ import annotations

from trinity_desktop.model import Scenario
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets


def default_scenario() -> Scenario:
    return Scenario(hardware=hardware_presets()["h100-sxm"], model=model_presets()["llama-3-70b"], kind="train",
                    gpus=64, gpus_per_node=8, tp=8, pp=2, zero=1, recompute="selective", micro_batch=1,
                    global_batch=256, seq_len=8192, batch=16, prompt_len=4096, gen_len=1024)
