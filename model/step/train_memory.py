"""Memory of one GPU of the training step's peak pipeline stage, before offload moves any of it off the GPU.

Model states: the stage's dense and expert parameters (`stage_params`), ZeRO-sharded over DP x CP (experts over
DP x CP / EP) with memory.model_state_bytes (ZeRO §5); ZeRO-3 under PP adds memory.zero3_pipeline_resident_bytes. Activations: stored bytes per layer by the recompute mode
and the activation recipe (Korthikanti et al. 2022 §4; DeepSeek-V3's recipe; torchtitan's op-level selective
checkpointing; Transformer Engine's FP8 copies), times the layer loads the 1F1B schedule keeps on the stage,
plus the transient buffers, NCCL buffers and runtime of memory.peak_memory_extras. MTP modules (train_mtp.py) sit
on the last stage: their parameters, one micro-batch of their activations per in-flight load, their losses' logits.
"""

from __future__ import annotations

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars
from trinity_desktop.model.formulas.lora import adapter_params, frozen_weight_bytes
from trinity_desktop.model.formulas.memory import (
    LayerWidths,
    PeakExtras,
    activation_bytes_per_layer,
    deepseek_v3_activation_bytes_per_layer,
    fsdp_root_unsharded_bytes,
    layers_per_stage,
    logits_buffer_bytes,
    model_state_bytes,
    nccl_buffer_bytes,
    op_sac_activation_bytes_per_layer,
    peak_memory_extras,
    stage_layer_counts,
    stored_layer_loads,
    te_fp8_activation_bytes_per_layer,
    zero3_gather_buffer_bytes,
    zero3_pipeline_resident_bytes,
)
from trinity_desktop.model.formulas.train_compute import StepShape
from trinity_desktop.model.formulas.train_mtp import mtp_saved_logits_bytes, mtp_stage_params
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.step.layout import TrainInputs
from trinity_desktop.model.step.quantities import record


@record
class StageMemory:
    """Bytes per GPU of the peak stage, and the parameter counts the rest of the step shards and sends."""

    psi_dense: object              # dense parameters this GPU holds (stage_params)
    psi_expert: object             # routed-expert parameters this GPU holds
    k_bytes: object                # fp32 master + optimizer-state bytes per parameter
    act_layer_bytes: object        # stored activations of one layer, one micro-batch
    extras: PeakExtras             # stored activations at the peak (after activation offload's `keep`) and the rest
    activations: object            # stored activations of the peak stage before activation offload
    weights: object
    gradients: object
    optimizer: object
    frozen_params: object = 0.0    # LoRA / QLoRA: the frozen base parameters of this GPU's stage (0 = off)
    frozen_dense_bytes: object = 0.0   # their bytes before ZeRO-3 sharding: dense, routed experts
    frozen_expert_bytes: object = 0.0


def stage_params(arch: Architecture, tp, pp, ep):
    """(dense, expert) parameters held by one GPU of the busiest pipeline stage.

    Layers split evenly over stages (ceil(L/p) on the busiest); embeddings sit on the first stage and
    the output head on the last (both on one stage when p = 1); TP shards everything; EP shards routed
    experts. Norm parameters are counted as sharded too (they are < 0.01% of the total)."""
    tp, pp, ep = (xp.asarray(x, dtype=float) for x in (tp, pp, ep))
    L = arch.layers
    final_norm = arch._norm_params()
    experts = arch.expert_params()
    layer_total = arch.params_total() - arch.embedding_params() - final_norm
    frac = layers_per_stage(L, pp) / L
    token_emb = arch.vocab * arch.hidden + (arch.max_seq * arch.hidden if arch.position == "learned" else 0)
    emb_stage = xp.where(pp == 1, arch.embedding_params() + final_norm, token_emb + final_norm)
    dense = ((layer_total - experts) * frac + emb_stage) / tp
    expert = experts * frac / (tp * ep)
    return dense, expert


def with_mtp_stage(arch: Architecture, x: TrainInputs, shape: StepShape, psi_dense, psi_expert):
    """(dense, expert) parameters per GPU of the peak stage once the last stage holds the MTP modules
    (train_mtp.mtp_stage_params): its `last_stage_layers` layers, the output head and final norm, and the modules;
    the larger of that and the busiest stage of `stage_params` (p = 1: the one stage holds both)."""
    mtp_d, mtp_e = mtp_stage_params(arch, x.mtp_depth, shape.tp, shape.ep)
    tp, ep, pp = (xp.asarray(v, dtype=float) for v in (shape.tp, shape.ep, shape.pp))
    L, experts = arch.layers, arch.expert_params()
    layer_dense = (arch.params_total() - arch.embedding_params() - arch._norm_params() - experts) / L
    _, _, last = stage_layer_counts(L, pp, x.first_stage_layers, x.last_stage_layers)
    head = (0 if arch.tied_embeddings else arch.vocab * arch.hidden) + arch._norm_params()
    last_d = (last * layer_dense + head) / tp + mtp_d
    last_e = last * experts / L / (tp * ep) + mtp_e
    last_wins = (pp > 1) & (last_d + last_e > psi_dense + psi_expert)
    return (xp.where(pp <= 1, psi_dense + mtp_d, xp.where(last_wins, last_d, psi_dense)),
            xp.where(pp <= 1, psi_expert + mtp_e, xp.where(last_wins, last_e, psi_expert)))


def stage_memory(arch: Architecture, x: TrainInputs, shape: StepShape) -> StageMemory:
    """The peak stage's memory per GPU (the module docstring) on the step's layout `shape` (its arrays)."""
    tp, pp, cp, ep, dp, zero, recompute = shape.tp, shape.pp, shape.cp, shape.ep, shape.dp, shape.zero, shape.recompute
    m, v, s_local, lps, act_keep = shape.m, shape.v, shape.s_local, shape.lps, shape.act_keep
    micro_batch, sp, flash, act_bytes = x.micro_batch, x.sp, x.flash, x.act_bytes
    weight_bytes, grad_bytes = x.weight_bytes, x.grad_bytes
    L, h, a = arch.layers, arch.hidden, arch.heads
    psi_dense, psi_expert = with_mtp_stage(arch, x, shape, *stage_params(arch, tp, pp, ep))
    # LoRA / QLoRA (#23, formulas/lora.py): the adapters are the trained parameters, the frozen base holds weights
    # (ZeRO-3 shards the frozen base over DP too, and gathers it: FSDP-QLoRA)
    lora_on = xp.asarray(x.lora_rank) > 0
    frozen_params = xp.where(lora_on, psi_dense + psi_expert, 0.0)
    frozen_dense = frozen_weight_bytes(arch, xp.where(lora_on, psi_dense, 0.0), weight_bytes, x.qlora)
    frozen_expert = frozen_weight_bytes(arch, xp.where(lora_on, psi_expert, 0.0), weight_bytes, x.qlora)
    z3 = xp.asarray(zero) == 3
    frozen_bytes = frozen_dense / xp.where(z3, dp * cp, 1.0) + frozen_expert / xp.where(z3, dp * cp / ep, 1.0)  # as below
    adapters, stage_share = adapter_params(arch, x.lora_rank, x.lora_targets), layers_per_stage(L, pp) / L
    psi_dense = xp.where(lora_on, adapters.dense * stage_share / tp, psi_dense)
    psi_expert = xp.where(lora_on, adapters.expert * stage_share / (tp * ep), psi_expert)
    k_bytes = xp.asarray(x.master_bytes, dtype=float) + x.opt_state_bytes
    # ZeRO shards over DP x CP: CP ranks hold the same weights and reduce gradients together (torchtitan's FSDP mesh
    # dp_shard_cp; Megatron's distributed optimizer over the data-parallel group with context parallel)
    shard = dp * cp
    w_d, g_d, o_d = model_state_bytes(psi_dense, shard, zero, weight_bytes, grad_bytes, k_bytes)
    w_e, g_e, o_e = model_state_bytes(psi_expert, shard / ep, zero, weight_bytes, grad_bytes, k_bytes)
    # ZeRO-3 under pipeline parallelism keeps the stage's weights gathered and its gradients accumulated unsharded
    w_pp_d, g_pp_d = zero3_pipeline_resident_bytes(psi_dense, zero, pp, shard, m, weight_bytes)
    w_pp_e, g_pp_e = zero3_pipeline_resident_bytes(psi_expert, zero, pp, shard / ep, m, weight_bytes)  # as sharded
    w_pp, g_pp = w_pp_d + w_pp_e, g_pp_d + g_pp_e
    n_moe = arch.moe_layers
    moe_ffn = (arch.moe_ffn_hidden or arch.ffn_hidden) * (arch.experts_per_token + arch.shared_experts)
    ffn_avg = ((L - n_moe) * arch.ffn_hidden + n_moe * moe_ffn) / L
    kv_width = a * arch.qk_dim if arch.attention == "mla" else arch.kv_heads * arch.head_dim
    widths = LayerWidths(h, a, q_width=a * arch.qk_dim, kv_width=kv_width, ffn=ffn_avg, gated=arch.gated_mlp)
    per_layer_act = activation_bytes_per_layer(s_local, micro_batch, widths, tp, sp, recompute, flash,
                                               act_bytes=act_bytes)
    # DeepSeek-V3's recipe (memory.deepseek_v3_activation_bytes_per_layer), dense and MoE layers averaged
    def ds(ffn, active):
        return deepseek_v3_activation_bytes_per_layer(
            s_local, micro_batch, h, tp=tp, sp=sp, q_latent=arch.q_lora_rank or a * arch.qk_dim,
            kv_latent=arch.kv_width if arch.attention == "mla" else 2 * kv_width, attn_out_width=a * arch.v_dim,
            ffn=ffn, experts_active=active)
    ds_layer = ((L - n_moe) * ds(arch.ffn_hidden, 1.0)
                + n_moe * ds(arch.moe_ffn_hidden or arch.ffn_hidden, arch.experts_per_token + arch.shared_experts)) / L
    sac_layer = op_sac_activation_bytes_per_layer(s_local, micro_batch, h, tp=tp, sp=sp, q_width=a * arch.qk_dim,
                                                  kv_width=kv_width, ffn=ffn_avg)
    te_layer = te_fp8_activation_bytes_per_layer(s_local, micro_batch, h, tp=tp, sp=sp, q_width=a * arch.qk_dim,
                                                 kv_width=kv_width, ffn=ffn_avg, gated=arch.gated_mlp)
    recipe = xp.asarray(x.activation_recipe)
    selective_recipe = xp.where((recipe == 2) & (recompute == 1), sac_layer,
                                xp.where((recipe == 3) & (recompute == 1), te_layer, per_layer_act))
    per_layer_act = xp.where(recompute == 2, per_layer_act, xp.where(recipe == 1, ds_layer, selective_recipe))
    peak_loads, last_loads = stored_layer_loads(L, pp, m, v, x.first_stage_layers, x.last_stage_layers)
    # the MTP modules' activations on the last stage: as many loads per module as each of its layers holds
    _, _, last_layers = stage_layer_counts(L, pp, x.first_stage_layers, x.last_stage_layers)
    last_layers = xp.where(xp.asarray(pp, dtype=float) <= 1, float(L), last_layers)
    mtp_loads = xp.asarray(x.mtp_depth, dtype=float) * last_loads / last_layers
    peak_loads, last_loads = xp.maximum(peak_loads, last_loads + mtp_loads), last_loads + mtp_loads
    layer_none = activation_bytes_per_layer(s_local, micro_batch, widths, tp, sp, 0, flash, act_bytes=act_bytes)
    # p = 1 under FSDP: the root group (embeddings, final norm, output layer) is gathered on its own, not per layer
    root = xp.where(lora_on | (xp.asarray(pp, dtype=float) > 1.0), 0.0,
                    (arch.embedding_params() + arch._norm_params()) / xp.asarray(tp, dtype=float))
    layer_params = (psi_dense - root + psi_expert + (frozen_dense + frozen_expert) / weight_bytes) / lps
    gather = (zero3_gather_buffer_bytes(layer_params, zero, weight_bytes, shard, lps)
              + fsdp_root_unsharded_bytes(root, zero, shard, pp, weight_bytes))
    extras = peak_memory_extras(per_layer_act, layer_none, peak_loads, last_loads, recompute=recompute, pp=pp,
                                logits=logits_buffer_bytes(micro_batch, s_local, arch.vocab, tp)
                                + mtp_saved_logits_bytes(micro_batch, s_local, arch.vocab, tp, x.mtp_depth),
                                gather=gather,
                                network_buffers=nccl_buffer_bytes(tp, cp, shard, pp, ep), keep=act_keep)
    return StageMemory(psi_dense=psi_dense, psi_expert=psi_expert, k_bytes=k_bytes, act_layer_bytes=per_layer_act,
                       extras=extras, activations=extras.activations / act_keep,  # before activation offload
                       weights=w_d + w_e + w_pp + frozen_bytes, gradients=g_d + g_e + g_pp, optimizer=o_d + o_e,
                       frozen_params=frozen_params, frozen_dense_bytes=frozen_dense,
                       frozen_expert_bytes=frozen_expert)
