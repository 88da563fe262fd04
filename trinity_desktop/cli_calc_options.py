"""The options of `calc train` and `calc infer` (cli.py runs them): each Scenario field a flag, its numbers
checked against model/base/ranges.py as they are parsed, so a bad value is one line and exit 2 before anything
computes. Imports cli_options and cli_validate, never cli.
"""

from __future__ import annotations

import argparse

from trinity_desktop import cli_load, cli_validate
from trinity_desktop.cli_options import (
    GPN_HELP,
    add_comm_overlap_options,
    add_cost_option,
    add_model_and_hardware_choice,
    add_scenario_option,
    scenario_default,
    scenario_number,
    whole_number,
)
from trinity_desktop.cli_speculative import add_speculative_options  # speculative decoding (#23)
from trinity_desktop.model.base.dtypes import (
    KV_DTYPES,
    OPTIMIZER_STATE_BYTES,
    TRAIN_PRECISIONS,
    WEIGHT_FORMATS,
)
from trinity_desktop.model.base.ranges import INFERENCE_DEFAULTS
from trinity_desktop.model.base.ranges import SCENARIO_LIMITS as LIMITS
from trinity_desktop.model.formulas.kv_policy import KV_POLICIES
from trinity_desktop.model.inputs.disaggregation_layout import KV_TRANSFER_LINKS
from trinity_desktop.model.inputs.scenario import (
    ACTIVATION_RECIPES,
    ATTENTION_KERNELS,
    DECODE_ATTENTION_KERNELS,
    LORA_TARGETS,
    OFFLOAD_MODES,
    RECOMPUTE,
)
from trinity_desktop.model.step.kv_residency import PLACEMENT_POLICIES


def _add_calc_common(p: argparse.ArgumentParser, json_keys: str = "") -> None:
    add_model_and_hardware_choice(p)
    p.add_argument("--technique", action="append", default=[], metavar="NAME",
                   help="apply a technique of resources/techniques.toml (key or name) after the other options; "
                        "repeatable, applied in order; one that does not apply is an error")
    p.add_argument("--json", action="store_true",
                   help="print machine-readable JSON (pressure: share of each resource's limit used, as the "
                        "heatmap shows it; triangle_weights: pressure normalised to sum to 1; techniques_applied, stages, roofline" + json_keys + ")")
    add_cost_option(p)  # cost and power (#23)


def add_calc_train(calc) -> None:
    """`calc train`: the layout, recompute, batch, precision, offload, overlap and MoE communication options."""
    train = calc.add_parser("train", help="one training step")
    _add_calc_common(train)
    add_scenario_option(train, "gpus")
    add_scenario_option(train, "gpus_per_node", None, help=GPN_HELP)
    for name in ("tp", "pp", "cp", "ep"):
        add_scenario_option(train, name)
    add_scenario_option(train, "virtual_stages",
                       help="interleaved 1F1B: model chunks per pipeline stage (default 1, plain 1F1B)")
    for name in ("first_stage_layers", "last_stage_layers"):
        add_scenario_option(train, name, help=f"uneven pipeline: layers on the {name.split('_')[0]} stage "
                                              "(default 0, the even split; Megatron's --decoder-*-pipeline-num-layers)")
    train.add_argument("--dp", type=scenario_number("gpus"), help="default: gpus / (tp x pp x cp)")
    add_scenario_option(train, "zero", choices=(0, 1, 2, 3))
    train.add_argument("--recompute", choices=RECOMPUTE, default=scenario_default("recompute"))
    train.add_argument("--activation-recipe", choices=ACTIVATION_RECIPES, default=scenario_default("activation_recipe"),
                       help="tensors a layer stores: megatron (Korthikanti et al. 2022), deepseek-v3 (RMSNorm and "
                            "MLA up-projections recomputed, FP8/E5M6 activation caching; DeepSeek-V3 report 3.2.3, "
                            "3.3.3), torchtitan-op-sac (selective recompute saves every other matmul output) or te-fp8 "
                            "(Transformer Engine keeps FP8 GEMM inputs for the backward)")
    train.add_argument("--sequence-parallel", action=argparse.BooleanOptionalAction,
                       default=scenario_default("sequence_parallel"))
    train.add_argument("--flash-attention", action=argparse.BooleanOptionalAction,
                       default=scenario_default("flash_attention"))
    add_scenario_option(train, "micro_batch")
    add_scenario_option(train, "global_batch", None, help="sequences per step (default: micro-batch x DP)")
    add_scenario_option(train, "seq_len")
    train.add_argument("--precision", choices=TRAIN_PRECISIONS, default=scenario_default("precision"))
    train.add_argument("--optimizer", choices=tuple(OPTIMIZER_STATE_BYTES), default=scenario_default("optimizer"))
    train.add_argument("--offload", choices=OFFLOAD_MODES, default=scenario_default("offload"),
                       help="optimizer (ZeRO-Offload), activations (vDNN) or nvme (ZeRO-Infinity); default none")
    add_comm_overlap_options(train)
    # LoRA / QLoRA fine-tuning (#23, model/formulas/lora.py)
    add_scenario_option(train, "lora_rank", metavar="R",
                        help="train LoRA adapters of rank R on the frozen model (Hu et al. 2021; default 0, off); "
                             "--json adds lora {rank, targets, qlora, trainable_params}")
    train.add_argument("--lora-targets", choices=LORA_TARGETS, default=scenario_default("lora_targets"),
                       help="adapted matrices: qv (Wq, Wv; default), qkvo (all attention) or all (every linear layer)")
    train.add_argument("--qlora", action="store_true", default=scenario_default("qlora"),
                       help="frozen base in NF4 with double quantisation (QLoRA, Dettmers et al. 2023); needs --lora-rank")
    cli_validate.add_calc_options(train)
    # attention kernel (#22)
    train.add_argument("--attention-kernel", choices=ATTENTION_KERNELS, default=scenario_default("attention_kernel"),
                       help="flash attention kernel: auto (the GPU family's measured kernel, FlashAttention-3 class "
                            "on Hopper and Blackwell) or flash-attention-2 (PyTorch SDPA's; 35%% of H100's peak)")


def add_calc_infer(calc) -> None:
    """`calc infer`: the replica, batch or sessions, lengths, formats and KV-cache options."""
    infer = calc.add_parser("infer", help="one inference request (prefill + decode)")
    _add_calc_common(infer, ", kv_residency_bytes {hbm, host, cxl, ssd}, "
                                   "effective_time_per_output_token_s, speculative {expected_tokens_per_step, "
                                   "speedup, ...} with --draft-model or --mtp; disaggregated {kv_transfer_s, pools, "
                                   "aggregated, ...} with --prefill-gpus and --decode-gpus")
    add_scenario_option(infer, "gpus", INFERENCE_DEFAULTS["gpus"],
                       help="GPUs of one replica, TP x PP (tensor-parallel degree TP = gpus / pp; default 1)")
    add_scenario_option(infer, "pp",
                       help="pipeline stages, each holding layers / pp; must divide the layers and --gpus (default 1)")
    add_scenario_option(infer, "gpus_per_node", None, help=GPN_HELP)
    batch = infer.add_mutually_exclusive_group()
    add_scenario_option(batch, "batch", None, help=f"sequences decoded together (default {LIMITS['batch'].default})")
    batch.add_argument("--sessions", type=scenario_number("batch"),
                       help="concurrent sessions, each with its own KV cache (sets the batch)")
    length = infer.add_mutually_exclusive_group()
    add_scenario_option(length, "prompt_len", None, help=f"prompt tokens (default {LIMITS['prompt_len'].default})")
    length.add_argument("--context", type=whole_number(1, LIMITS["prompt_len"].highest + LIMITS["gen_len"].highest),
                        metavar="N",
                        help="tokens per sequence, prompt + generated (sets prompt-len = N - gen-len; N > gen-len)")
    add_scenario_option(infer, "gen_len", help=f"generated tokens (default {LIMITS['gen_len'].default})")
    infer.add_argument("--weight-dtype", choices=WEIGHT_FORMATS, default=scenario_default("weight_dtype"))
    infer.add_argument("--kv-dtype", choices=KV_DTYPES, default=scenario_default("kv_dtype"))
    infer.add_argument("--kv-policy", choices=KV_POLICIES, default=scenario_default("kv_policy"),
                       help="KV-cache policy: full, window (sliding window), streaming (sinks + window), "
                            "h2o (heavy hitters + window), razor (retrieval heads full, others sinks + window)")
    add_scenario_option(infer, "kv_window", help=f"recent-window tokens (default {LIMITS['kv_window'].default})")
    add_scenario_option(infer, "kv_sinks", help=f"attention-sink tokens (default {LIMITS['kv_sinks'].default})")
    add_scenario_option(infer, "kv_offload_fraction",
                       help="share of the KV cache kept in host DRAM, fetched each step (FlexGen; default 0)")
    infer.add_argument("--kv-placement", choices=PLACEMENT_POLICIES, default="spill",
                       help="KV beyond HBM: spill to host, CXL, SSD (default), or evict it")
    add_speculative_options(infer)  # speculative decoding (#23)
    # MoE serving (#23): expert parallelism, data-parallel attention, redundant experts, FP8 dispatch
    infer.add_argument("--ep", "--inference-ep", dest="inference_ep", type=scenario_number("inference_ep"), default=1, metavar="N",
                       help="expert parallelism over one pipeline stage's GPUs: 1 (off, experts TP-split) or gpus / pp")
    add_scenario_option(infer, "attention_dp", metavar="N",
                       help="data-parallel attention groups, each with a share of the batch (TP = gpus / (pp x N); "
                            "needs --ep; default 1)")
    add_scenario_option(infer, "redundant_experts", metavar="N",
                       help="extra expert copies per GPU (DeepSeek-V3 prefill: 1; needs --ep; default 0)")
    infer.add_argument("--moe-fp8-dispatch", action="store_true", default=scenario_default("moe_fp8_dispatch"),
                       help="dispatch MoE tokens in FP8, combine in BF16 (DeepSeek-V3; default off)")
    add_scenario_option(infer, "moe_node_limit", metavar="M",
                       help="nodes each token may be routed to in prefill (0 = no limit; DeepSeek-V3: 4)")
    cli_validate.add_calc_options(infer)
    # load and latency targets (#23)
    cli_load.add_load_options(infer)
    add_disaggregation_options(infer)  # disaggregated prefill and decode (#23)
    # decode attention kernel (#22)
    infer.add_argument("--decode-attention-kernel", choices=DECODE_ATTENTION_KERNELS,
                       default=scenario_default("decode_attention_kernel"),
                       help="decode attention kernel: auto (grouped paged kernel, a GQA group's KV read once) or "
                            "masked-mha (FasterTransformer, TensorRT-LLM before 0.8: KV read once per query head)")


# disaggregated prefill and decode (#23)
DISAGGREGATION_FIELDS = ("prefill_gpus", "decode_gpus", "prefill_tp", "prefill_pp", "decode_tp", "decode_pp")


def add_disaggregation_options(p: argparse.ArgumentParser) -> None:
    """--prefill-gpus / --decode-gpus (pools; 0 = aggregated), each pool's --*-tp / --*-pp (0 = the replica's),
    --kv-transfer-link and --kv-transfer-layerwise; `calc infer --json` then adds a `disaggregated` object."""
    add_scenario_option(p, "prefill_gpus", metavar="N", help="disaggregated serving: GPUs of the prefill pool "
                                                            "(DistServe, Splitwise; default 0, aggregated)")
    add_scenario_option(p, "decode_gpus", metavar="N", help="GPUs of the decode pool (default 0, aggregated)")
    for name in DISAGGREGATION_FIELDS[2:]:
        pool, dim = name.split("_")
        add_scenario_option(p, name, metavar="N", help=f"{dim.upper()} of each {pool} instance (default 0: the "
                                                       f"replica's, from --gpus and --pp)")
    p.add_argument("--kv-transfer-link", choices=KV_TRANSFER_LINKS, default=scenario_default("kv_transfer_link"),
                   help="link the KV cache crosses from prefill to decode: scale-up (NVLink, a prefill and a "
                        "decode instance in one node), scale-out (one NIC per GPU) or auto (default)")
    p.add_argument("--kv-transfer-layerwise", action="store_true",
                   default=scenario_default("kv_transfer_layerwise"),
                   help="stream each layer's KV as it is computed, behind the prefill (Mooncake; default off)")


def disaggregation_fields(args) -> dict:
    """The Scenario fields of the disaggregation options (cli.infer_scenario passes them on)."""
    return {**{name: getattr(args, name) for name in DISAGGREGATION_FIELDS},
            "kv_transfer_link": args.kv_transfer_link, "kv_transfer_layerwise": args.kv_transfer_layerwise}
