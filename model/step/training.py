"""One training step: memory per GPU, FLOPs, time by stage, bytes per link. Vectorized.

`training_step` takes numbers (or numpy arrays, broadcast together) for every layout and precision knob,
so the same call computes one scenario, a slider sweep, or a grid of configurations.

Time model (per GPU on the busiest pipeline stage, the critical path):
  t_mb     = compute + the exposed part of TP all-reduces, CP all-gathers, EP all-to-alls and PP sends, per
             micro-batch (model/formulas/overlap.py: TP hides behind the GEMMs with tp_comm_overlap, EP + PP
             behind the paired chunk under DualPipe; both off by default, so all of it by default). EP: four
             all-to-alls per MoE layer of the GPU's tokens x hidden x top-k (comms.moe_all_to_all: FP8 dispatch,
             node-limited routing, DeepSeek-V3 §3.2.2 / §3.3.4)
  pipeline = m · t_mb + Σ_{other stages} t_s / v   (formulas/pipeline_bubble.py; balanced stages: (m + (p-1)/v) · t_mb,
                                         Narayanan et al. 2021 §2.2.1/§2.2.2); interleaved 1F1B with v chunks
                                         per stage: every micro-batch crosses v stage boundaries per direction
                                         on each GPU (v x the PP sends)
  DP       = gradient sync overlapping the last micro-batch's backward in buckets (the last bucket exposed); ZeRO-3 parameter all-gathers
             prefetched behind each micro-batch's compute, and the DP link they hold during the last
             backward is not free for the gradient sync; ZeRO-1/2 parameter all-gather after the step
  step     = pipeline + exposed DP + optimizer (HBM-bound: reads and writes every local state byte)
             + gradient compression (DGC top-k selection; quantise/dequantise for quantised communication)
             + exposed offload transfers over the host link (and, for ZeRO-Infinity, to and from NVMe)
  compute  = the busiest stage's (train_compute.busiest_stage): the first stage's layers and the embedding, the
             last stage's layers, output head, losses and MTP modules (formulas/train_mtp.py), the middle stages'
             layers; under DualPipe the end ranks hold half the first and half the last stage. The MTP blocks' TP
             all-reduces and EP all-to-alls are stage-averaged

Quantised gradient communication (QSGD, Alistarh et al. 2017; 8-bit all-reduce): the data-parallel gradient
traffic is sent at `grad_comm_bytes` per element instead of the gradient format's width, so the reduce-scatter
(or all-reduce, or DGC all-gather) volume scales by grad_comm_bytes / grad_bytes. Quantising before the send
and dequantising what arrives costs QUANT_FLOPS_PER_ELEMENT FLOPs and QUANT_HBM_PASSES HBM passes over the
local gradient per step (stated assumptions, not measured).

NVMe offload (ZeRO-Infinity, Rajbhandari et al. 2021): as ZeRO-Offload (gradients down, updated weights up over
the host link, Adam on the CPU), but the fp32 master weights and optimizer states live on NVMe: each step
reads and writes them (2 x local x K bytes at `hardware.nvme_bw`). The reads are prefetched behind the last
micro-batch's backward pass, the writes stream behind the CPU's update; what does not hide is exposed.
"""

from __future__ import annotations

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars
from trinity_desktop.model.base.numeric import safe_div
from trinity_desktop.model.formulas.comms import (
    allreduce_bus_factor,
    allreduce_time,
    gather_bus_factor,
    gather_time,
    gradient_sync,
    link_for_group,
    moe_all_to_all,
    moe_dispatch_bytes,
    moe_scaleup_bandwidths,
)
from trinity_desktop.model.formulas.flops import attention_core_flops_per_token, training_flops
from trinity_desktop.model.formulas.kernel_efficiency import mfu_peak, runs_fp8
from trinity_desktop.model.formulas.kv_policy import mean_min
from trinity_desktop.model.formulas.lora import lora_flops, qlora_dequant_s
from trinity_desktop.model.formulas.memory import layers_per_stage
from trinity_desktop.model.formulas.overlap import (
    CommTerm,
    bucketed_grad_exposed,
    dualpipe_compute,
    dualpipe_exposed,
    tp_exposed,
)
from trinity_desktop.model.formulas.pipeline_bubble import pipeline_time, pp_sends
from trinity_desktop.model.formulas.train_compute import KernelRates, StepShape, head_in_bf16, train_compute
from trinity_desktop.model.formulas.train_mtp import mtp_forward_flops_per_token
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.step.layout import TrainInputs
from trinity_desktop.model.step.quantities import LinkBytes, record
from trinity_desktop.model.step.train_memory import stage_memory

# ZeRO-Offload runs Adam on the host CPU, bound by host memory bandwidth. Stated assumption: a DGX-class
# host has 2 sockets x 8 DDR5-4800 channels = 614 GB/s for 8 GPUs, 77 GB/s each; ~65% achievable -> 50 GB/s.
HOST_OPTIMIZER_BW = 50e9
# Quantised communication (QSGD-style, stated assumptions): per gradient element, scale + round before the send
# and scale + accumulate after it = 4 FLOPs; read the gradient and write its quantised copy, then read what
# arrives = 2 passes of the local gradient through HBM.
QUANT_FLOPS_PER_ELEMENT = 4.0
QUANT_HBM_PASSES = 2.0
OFFLOAD_NONE, OFFLOAD_OPTIMIZER, OFFLOAD_ACTIVATIONS, OFFLOAD_NVME = 0, 1, 2, 3


@record
class TrainMemory:
    """Bytes per GPU of the pipeline stage at the peak: model states (ZeRO-sharded, offloaded ones removed), the
    activations of the micro-batches in flight, the transient buffers (logits and loss, the layer being recomputed,
    ZeRO-3 gathers), NCCL's channel buffers and the runtime (CUDA context, allocator reserve): memory.py."""

    weights: object
    gradients: object
    optimizer: object
    activations: object
    transient: object = 0.0
    network_buffers: object = 0.0
    runtime: object = 0.0


@record
class TrainTime:
    """Seconds of one step by part: the step is their sum (`TrainStep.time_total`)."""

    compute: object
    communication_exposed: object
    pipeline_bubble: object
    optimizer: object
    gradient_compression: object
    offload_transfer: object


@record
class TrainPieces:
    """The per-micro-batch (`_mb`) and per-step pieces of the step, one GPU of the busiest stage, that the
    stage timeline (model/views/stages.py) and the roofline draw: seconds `_s`, bytes `_bytes` (bus bytes for
    collectives), the link each group talks over ("scale-up" / "scale-out"), FLOP shares of the micro-batch."""

    micro_batches: object
    pp: object
    virtual_stages: object
    dp: object
    layers_per_stage: object
    compute_mb_s: object           # forward + backward compute of one micro-batch (recomputation included)
    first_stage_mb_s: object       # compute_mb_s of the first, a middle and the last stage (the busiest is compute_mb_s)
    middle_stage_mb_s: object
    last_stage_mb_s: object
    backward_mb_s: object          # its backward share
    grad_overlap_s: object         # time the DP gradient sync hides behind
    recompute_mb_s: object
    flops_mb: object               # hardware FLOPs of one micro-batch
    backward_flop_share: object
    recompute_flop_share: object
    tp_allreduces_per_layer: object
    tp_mb_s: object
    cp_mb_s: object
    ep_mb_s: object
    pp_mb_s: object
    tp_exposed_mb_s: object        # the parts of tp_mb_s / ep_mb_s / pp_mb_s left on the critical path
    ep_exposed_mb_s: object
    pp_exposed_mb_s: object
    tp_mb_bytes: object
    cp_mb_bytes: object
    ep_mb_bytes: object            # scale-out + scale-up bytes of the four all-to-alls
    ep_mb_scaleout_bytes: object
    pp_mb_bytes: object
    tp_link: object
    cp_link: object
    ep_link: object
    pp_link: object
    dp_link: object
    edp_link: object               # the expert-data-parallel group's link
    grad_sync_s: object            # DP gradient reduce-scatter / all-reduce (dense + expert)
    dp_grad_bytes: object
    edp_grad_bytes: object
    dense_grad_bytes: object       # this rank's dense gradients (psi_dense x gradient width), before the wire
    param_gather_s: object         # one ZeRO parameter all-gather (dense + expert)
    dp_gather_bytes: object
    edp_gather_bytes: object
    compress_s: object             # DGC top-k selection and gradient quantisation
    compress_hbm_bytes: object
    grads_to_host_bytes: object    # ZeRO-Offload: gradients down
    params_from_host_bytes: object  # ZeRO-Offload: updated weights up
    act_swap_bytes: object         # vDNN: activations out and back in, one micro-batch
    grads_to_host_s: object
    params_from_host_s: object
    act_swap_s: object
    host_bw: object
    optimizer_bytes: object        # local state bytes the optimizer streams: local x (2K + g + w)
    optimizer_s: object
    offload_optimizer: object
    offload_activations: object
    act_layer_bytes: object
    act_mb_bytes: object           # stored activations of one micro-batch on the stage
    zero: object
    recompute: object
    nvme_exposed_s: object
    stage0_extra_bytes: object     # HBM the first stage holds besides model states and stored activations
    last_stage_extra_bytes: object  # the same on the last stage (the loss's logits)


@record
class TrainComm:
    """Communication of one step by kind (seconds per step, one GPU of the busiest stage): total and exposed
    (overlap.CommTerm). PP sends and EP all-to-alls inside the pipeline bubble count as exposed."""

    tp: CommTerm
    cp: CommTerm
    ep: CommTerm
    pp: CommTerm
    dp_grad: CommTerm
    dp_params: CommTerm

    def terms(self) -> dict:
        return {"tp": self.tp, "cp": self.cp, "ep": self.ep, "pp": self.pp, "dp_grad": self.dp_grad,
                "dp_params": self.dp_params}


@record
class TrainStep:
    """Everything one training step computes (per GPU; FLOPs over all GPUs; seconds per step)."""

    pieces: TrainPieces
    dp: object
    micro_batches: object
    memory: TrainMemory
    memory_total: object
    model_flops: object
    hardware_flops: object
    time: TrainTime
    time_total: object
    comm: TrainComm
    communication_total: object    # every transfer of the step, hidden or not
    communication_overlapped: object  # the part of it hidden behind compute
    dp_comm_time: object
    backward_time_last_micro_batch: object
    pipeline_bubble_fraction: object
    mfu: object                    # against the BF16 peak for FP8 GEMMs (NVIDIA's and Meta's convention)
    mfu_format_peak: object        # against the peak of the GEMM format (the FP8 peak for FP8 training)
    tokens_per_s: object
    bytes_by_link: LinkBytes
    tokens: object
    host_bytes: object
    nvme_bytes: object
    nvme_traffic_bytes: object
    compute_share: object
    bandwidth_share: object


def training_step(arch: Architecture, hw: Hardware, inputs: TrainInputs) -> TrainStep:
    """One training step of `arch` on `hw` (the module docstring's time model): memory per GPU, FLOPs, time by
    part, bytes per link and the per-micro-batch pieces the stage timeline draws. Every field broadcasts over
    the inputs' arrays. Sources: Megatron-LM (Narayanan et al. 2021), Korthikanti et al. 2022 (activations,
    recomputation), ZeRO (Rajbhandari et al. 2020), ZeRO-Offload / ZeRO-Infinity, vDNN, DGC, QSGD."""
    x = inputs
    gpus, gpus_per_node, tp, pp, cp, ep = x.gpus, x.gpus_per_node, x.tp, x.pp, x.cp, x.ep
    sp, zero, recompute, flash = x.sp, x.zero, x.recompute, x.flash
    micro_batch, global_batch, seq_len = x.micro_batch, x.global_batch, x.seq_len
    weight_bytes, grad_bytes, act_bytes, peak = x.weight_bytes, x.grad_bytes, x.act_bytes, x.peak
    eff_compute, eff_hbm, eff_network = x.eff_compute, x.eff_hbm, x.eff_network
    offload, grad_compression, in_network_aggregation = x.offload, x.grad_compression, x.in_network_aggregation
    grad_comm_bytes, virtual_stages, grad_overlap = x.grad_comm_bytes, x.virtual_stages, x.grad_overlap
    tp_overlap, ep_overlap = x.tp_overlap, x.ep_overlap
    gpus, tp, pp, cp, ep = (xp.asarray(x, dtype=float) for x in (gpus, tp, pp, cp, ep))
    v = xp.asarray(virtual_stages, dtype=float)
    zero, recompute = xp.asarray(zero), xp.asarray(recompute)
    dp = gpus / (tp * pp * cp)
    m = xp.maximum(1.0, xp.ceil(xp.asarray(global_batch, dtype=float) / (micro_batch * dp)))
    L, h, a = arch.layers, arch.hidden, arch.heads
    s_local = xp.asarray(seq_len, dtype=float) / cp
    first_layers, last_layers = x.first_stage_layers, x.last_stage_layers
    lps = layers_per_stage(L, pp, first_layers, last_layers)
    # vDNN activation offload keeps two layers' activations in HBM
    act_keep = xp.where(xp.asarray(x.offload) == OFFLOAD_ACTIVATIONS, xp.minimum(lps, 2.0) / lps, 1.0)

    # --- memory per GPU -------------------------------------------------------------------------
    dual_active = (m >= 2.0) & ((ep > 1.0) | (pp > 1.0))  # DualPipe pairs two micro-batches' chunks (overlap.py)
    shape = StepShape(tp=tp, pp=pp, cp=cp, ep=ep, dp=dp, zero=zero, recompute=recompute, m=m, v=v, s_local=s_local,
                      lps=lps, act_keep=act_keep, mtp=x.mtp_depth, first_layers=first_layers, last_layers=last_layers,
                      dualpipe=xp.asarray(ep_overlap, dtype=bool) & dual_active, sp=sp)
    mem = stage_memory(arch, x, shape)  # step/train_memory.py
    psi_dense, psi_expert, k_bytes, per_layer_act = mem.psi_dense, mem.psi_expert, mem.k_bytes, mem.act_layer_bytes
    extras, activations = mem.extras, mem.activations
    weights_mem, grads_mem, optimizer_mem = mem.weights, mem.gradients, mem.optimizer
    n_moe = arch.moe_layers

    # --- FLOPs ----------------------------------------------------------------------------------
    tokens = xp.asarray(global_batch, dtype=float) * seq_len
    W = arch.matmul_params_active_per_layer()
    # Keys per query: the sequence (Korthikanti's convention), scaled on sliding-window layers by the causal
    # mean of min(x, W) over the mean causal context s/2 (= 2W - W²/s for s > W; kv_policy.mean_min).
    s_keys = xp.asarray(seq_len, dtype=float)
    share = arch.window_layer_share
    if share > 0:
        windowed = s_keys * mean_min(0.0, s_keys, float(arch.sliding_window)) / (s_keys / 2.0)
        s_keys = share * windowed + (1.0 - share) * s_keys
    attn_layer = attention_core_flops_per_token(s_keys, a, arch.qk_dim, arch.v_dim)
    # MTP modules (formulas/train_mtp.py, DeepSeek-V3 §2.2): one block and one more head GEMM each
    mtp = xp.asarray(x.mtp_depth, dtype=float)
    mtp_block, mtp_head = mtp_forward_flops_per_token(arch, mtp, attn_layer)
    layers_fwd = L * (2.0 * W + attn_layer) + mtp_block
    fwd = layers_fwd + 2.0 * h * arch.vocab + mtp_head
    attn_all = (L + mtp) * attn_layer
    model_flops, hw_flops = training_flops(tokens, fwd, attn_all, layers_fwd, recompute, flash)
    head_share = 3.0 * tokens * (2.0 * h * arch.vocab + mtp_head) / hw_flops  # the output heads' FLOPs
    # LoRA / QLoRA (#23, formulas/lora.py): no weight gradients for the frozen base; the adapters' own FLOPs
    lora = lora_flops(arch, x.lora_rank, x.lora_targets, tokens, fwd, attn_all, model_flops, hw_flops,
                      xp.asarray(x.lora_rank) > 0)
    model_flops, hw_flops = lora.model, lora.hardware

    # --- time per micro-batch on one GPU of the busiest stage ---------------------------------
    per_gpu_mb = hw_flops / (m * dp) / (tp * pp * cp)
    # kernel by kernel (formulas/train_compute.py): GEMMs by shape and GPU family, attention by its kernel,
    # memory-bound passes on HBM
    fp8 = runs_fp8(peak, hw)
    attn_extra = xp.where((recompute > 0) | xp.asarray(flash, dtype=bool), 1.0, 0.0)
    rates = KernelRates(peak, eff_compute, eff_hbm, act_bytes, fp8, xp.asarray(x.fp8_recipe) == 1,
                        head_in_bf16(x.activation_recipe))  # the head's GEMM in BF16 under TE's and DeepSeek's FP8
    kernels = train_compute(
        arch, hw, shape, rates,
        flops_mb=per_gpu_mb,
        attn_flops_mb=tokens * attn_all * (3.0 + attn_extra) / (m * dp) / (tp * pp * cp),
        attn_extra=attn_extra, micro_batch=micro_batch, s_keys=s_keys, flash=flash,
        attention_kernel=x.attention_kernel, head_share=head_share)
    dequant = qlora_dequant_s(arch, mem.frozen_params, x.qlora, recompute, hw.hbm_bw * eff_hbm)
    # DualPipe's comm kernels hold some SMs; each stage's compute, the busiest's t_c (train_compute.busiest_stage)
    t_c, *stage_c = (dualpipe_compute(t + dequant, ep_overlap, dual_active) for t in (kernels.total_s, *kernels.stage_s))
    bwd_share = (lora.backward + (hw_flops - model_flops)) / hw_flops
    t_bwd = t_c * bwd_share

    bw_tp, al_tp, in_tp = link_for_group(tp, 1, gpus_per_node, hw, eff_network)
    n_ar = 4.0 + 2.0 * (recompute == 2)  # Megatron: 2 forward + 2 backward (+2 when recomputing the forward)
    tp_msg = micro_batch * s_local * h * act_bytes
    lps_mtp = lps + mtp / pp  # the stage's layers and its share of the MTP blocks, as the compute counts them
    t_tp = lps_mtp * n_ar * allreduce_time(tp, tp_msg, bw_tp, al_tp)
    b_tp = lps_mtp * n_ar * allreduce_bus_factor(tp) * tp_msg

    bw_cp, al_cp, in_cp = link_for_group(cp, tp, gpus_per_node, hw, eff_network)
    cp_msg = 2.0 * micro_batch * xp.asarray(seq_len, dtype=float) * arch.kv_width * act_bytes / tp
    t_cp = lps * 2.0 * gather_time(cp, cp_msg, bw_cp, al_cp)  # K,V all-gather forward, reduce-scatter backward
    b_cp = lps * 2.0 * gather_bus_factor(cp) * cp_msg

    # EP: this GPU's tokens (sequence / CP, / TP under SP) x hidden x top-k, to the experts and back, forward and
    # backward: two passes at the dispatch width, two at the activation width (comms.moe_all_to_all)
    moe_lps = lps * n_moe / L + (mtp / pp if n_moe else 0.0)  # MTP's block is an MoE layer in an MoE model
    ep_tokens = micro_batch * s_local / xp.where(sp, tp, 1.0)
    ep_per_node = xp.minimum(ep, xp.maximum(1.0, xp.floor(gpus_per_node / (tp * cp))))
    has_up = hw.scaleup_bw > 0
    out_link = (hw.scaleout_bw * eff_network, hw.scaleout_latency_s)
    in_bw = xp.where(has_up, hw.scaleup_bw, hw.scaleout_bw) * eff_network
    in_alpha = xp.where(has_up, hw.scaleup_latency_s, hw.scaleout_latency_s)
    # dispatch-kernel and combine-kernel passes, at NVL72's measured rates (comms.moe_scaleup_bandwidths)
    in_bws = moe_scaleup_bandwidths(hw.key, in_bw)
    a2a = [moe_all_to_all(ep_tokens, h, arch.experts_per_token, width, ep, ep_per_node, x.moe_node_limit,
                          out_link, (bw_in, in_alpha))
           for width, bw_in in zip((moe_dispatch_bytes(act_bytes, x.moe_fp8_dispatch), act_bytes), in_bws, strict=True)]
    t_ep = moe_lps * 2.0 * (a2a[0][0] + a2a[1][0])
    b_ep_out = moe_lps * 2.0 * (a2a[0][1] + a2a[1][1])
    b_ep_in = moe_lps * 2.0 * (a2a[0][2] + a2a[1][2])
    b_ep = b_ep_out + b_ep_in
    in_ep = b_ep_out <= 0.0

    pp_msg = micro_batch * s_local * h * act_bytes / xp.where(sp, tp, 1.0)
    t_pp, b_pp, in_pp = pp_sends(pp, v, pp_msg, tp * cp * dp, gpus_per_node, hw, eff_network)  # formulas/pipeline_bubble

    # overlap (model/formulas/overlap.py): TP behind the GEMMs, then EP + PP behind what compute is left
    tp_exp = tp_exposed(t_tp, t_c, tp_overlap, sp)
    hide = t_c - (t_tp - tp_exp)
    ep_exp = dualpipe_exposed(t_ep, hide, ep_overlap, dual_active)
    pp_exp = dualpipe_exposed(t_pp, hide - (t_ep - ep_exp), ep_overlap, dual_active)
    ep_pp_exp = ep_exp + pp_exp
    t_mb = t_c + tp_exp + t_cp + ep_pp_exp
    # fill and drain through every other stage once (formulas/pipeline_bubble.py), its communication as the busiest's
    pipeline, bubble = pipeline_time(m, pp, v, t_mb, tuple(t + t_mb - t_c for t in stage_c))

    # --- data parallel: gradients and ZeRO parameter gathers ---------------------------------
    bw_dp, al_dp, in_dp = link_for_group(dp, tp * cp, gpus_per_node, hw, eff_network)
    bw_edp, al_edp, in_edp = link_for_group(dp / ep, tp * cp * ep, gpus_per_node, hw, eff_network)
    grads_d, grads_e = psi_dense * grad_bytes, psi_expert * grad_bytes
    # quantised communication: the wire carries grad_comm_bytes per element (0 = the gradient format)
    gcb = xp.asarray(grad_comm_bytes, dtype=float)
    wire = xp.where(gcb > 0.0, gcb, grad_bytes) / grad_bytes
    quantised = wire < 1.0
    params_d, params_e = psi_dense * weight_bytes, psi_expert * weight_bytes
    # LoRA under ZeRO-3 (#23): the frozen base is sharded and gathered with the adapters (FSDP-QLoRA)
    params_d = params_d + xp.where(zero == 3, mem.frozen_dense_bytes, 0.0)
    params_e = params_e + xp.where(zero == 3, mem.frozen_expert_bytes, 0.0)
    z0 = zero == 0
    ina = xp.asarray(in_network_aggregation, dtype=bool) & ~in_dp  # switch reduction on the scale-out fabric
    t_gd, b_gd = gradient_sync(dp, grads_d * wire, bw_dp, al_dp, z0, grad_compression, ina)
    t_ge, b_ge = gradient_sync(dp / ep, grads_e * wire, bw_edp, al_edp, z0, grad_compression, ina & ~in_edp)
    t_grad = t_gd + t_ge
    t_gather = gather_time(dp, params_d, bw_dp, al_dp) + gather_time(dp / ep, params_e, bw_edp, al_edp)
    n_gathers = xp.where(zero == 3, 2.0 * m, xp.where(zero >= 1, 1.0, 0.0))
    b_dp = b_gd + n_gathers * gather_bus_factor(dp) * params_d
    b_edp = b_ge + n_gathers * gather_bus_factor(dp / ep) * params_e
    # DGC: selecting the top-k gradients streams the gradient and its momentum residual through HBM
    # (read gradient, read/write residual: ~3 passes).
    # Quantised communication: QUANT_HBM_PASSES over the local gradient, QUANT_FLOPS_PER_ELEMENT per element.
    grad_elements = xp.where(dp > 1.0, psi_dense + psi_expert, 0.0)
    quant_flops = xp.where(quantised, QUANT_FLOPS_PER_ELEMENT * grad_elements, 0.0)  # per GPU
    quant_hbm = xp.where(quantised, QUANT_HBM_PASSES * grad_elements * grad_bytes, 0.0)
    t_quant = xp.maximum(quant_hbm / (hw.hbm_bw * eff_hbm), quant_flops / (peak * eff_compute))
    hw_flops_kernels = hw_flops
    hw_flops = hw_flops + quant_flops * gpus
    t_compress = xp.where(xp.asarray(grad_compression) > 1.0,
                          3.0 * (grads_d + grads_e) / (hw.hbm_bw * eff_hbm), 0.0) + t_quant

    # --- offload over the host link (ZeRO-Offload: optimizer; vDNN: activations) -------------
    offload = xp.asarray(offload)
    off_nvme = offload == OFFLOAD_NVME
    off_opt, off_act = (offload == OFFLOAD_OPTIMIZER) | off_nvme, offload == OFFLOAD_ACTIVATIONS
    host_bw = hw.host_link_bw * eff_network
    shard = xp.where(zero >= 1, 1.0 / dp, 1.0)
    shard_e = xp.where(zero >= 1, ep / dp, 1.0)
    local = psi_dense * shard + psi_expert * shard_e
    grads_down = xp.where(off_opt, local * grad_bytes, 0.0)   # gradients of the local shard to host
    params_up = xp.where(off_opt, local * weight_bytes, 0.0)  # updated weights back to the GPU
    act_swap = xp.where(off_act, 2.0 * per_layer_act * lps, 0.0)  # out in the forward, back in the backward
    t_down, t_up, t_swap = (safe_div(x, host_bw) for x in (grads_down, params_up, act_swap))
    swap_exposed = m * xp.maximum(0.0, t_swap - t_c)
    # ZeRO-Infinity keeps the optimizer states (fp32 master + moments) on NVMe; host memory keeps the gradients.
    nvme_bytes = xp.where(off_nvme, optimizer_mem, 0.0)
    host_bytes = xp.where(off_opt, optimizer_mem + grads_mem, 0.0) - nvme_bytes + xp.where(
        off_act, activations * (1.0 - xp.minimum(lps, 2.0) / lps), 0.0)
    kept_grads, kept_opt = xp.where(off_opt, 0.0, grads_mem), xp.where(off_opt, 0.0, optimizer_mem)
    kept_act = extras.activations
    memory = TrainMemory(weights=weights_mem, gradients=kept_grads, optimizer=kept_opt, activations=kept_act,
                         transient=extras.transient, network_buffers=extras.network_buffers,
                         runtime=extras.runtime_for(weights_mem + kept_grads + kept_opt + kept_act + extras.transient))
    memory_total = (memory.weights + memory.gradients + memory.optimizer + memory.activations + memory.transient
                    + memory.network_buffers + memory.runtime)

    # The gradient sync overlaps the last micro-batch's backward on the DP link. Under ZeRO-3 that link also
    # carries the backward's prefetched parameter all-gather (min(2·t_gather, t_c) of the link's time behind
    # t_c, the backward's share t_bwd/t_c of it), so only the rest of t_bwd is free for the gradients; the
    # backward compute cannot hide both at once (it did, and a longer sequence then shortened the step).
    zero3_link_busy = xp.where(zero == 3, xp.minimum(1.0, safe_div(2.0 * t_gather, t_c)), 0.0)
    # grad_overlap: the share of that free time the sync hides behind (an assumption: assumptions.toml)
    # reduced in buckets as the backward produces them: the last bucket waits for the backward's end (overlap.py)
    grad_exposed, overlap_s = bucketed_grad_exposed(t_grad + t_down, t_bwd * grad_overlap * (1.0 - zero3_link_busy),
                                                    (grads_d + grads_e) * wire)
    param_exposed = xp.where(zero == 3, m * xp.maximum(0.0, 2.0 * t_gather - t_c),
                             xp.where((zero == 1) | (zero == 2), t_gather, 0.0))
    dp_exposed = grad_exposed + param_exposed
    dp_time = t_grad + xp.where(zero == 3, 2.0 * m * t_gather, xp.where(zero >= 1, t_gather, 0.0))

    # --- optimizer step: streams every local state byte through HBM --------------------------
    opt_bytes = local * (2.0 * k_bytes + grad_bytes + weight_bytes)
    t_opt = xp.where(off_opt, opt_bytes / HOST_OPTIMIZER_BW, opt_bytes / (hw.hbm_bw * eff_hbm))

    # ZeRO-Infinity: read the local optimizer states from NVMe (prefetched behind the last backward pass) and
    # write them back (streamed behind the CPU's update).
    nvme_read = xp.where(off_nvme, local * k_bytes, 0.0)
    nvme_write = nvme_read
    nvme_bw = max(float(hw.nvme_bw), 0.0)
    t_nvme_read, t_nvme_write = safe_div(nvme_read, nvme_bw), safe_div(nvme_write, nvme_bw)
    nvme_exposed = xp.maximum(0.0, t_nvme_read - t_bwd) + xp.maximum(0.0, t_nvme_write - t_opt)

    offload_exposed = t_up + swap_exposed + nvme_exposed
    total = pipeline + dp_exposed + t_opt + t_compress + offload_exposed
    compute = m * t_c
    comm_exposed = m * (tp_exp + t_cp + ep_pp_exp) + dp_exposed
    comm = TrainComm(tp=CommTerm(m * t_tp, m * tp_exp), cp=CommTerm(m * t_cp, m * t_cp),
                     ep=CommTerm(m * t_ep, m * ep_exp), pp=CommTerm(m * t_pp, m * pp_exp),
                     dp_grad=CommTerm(t_grad + t_down, grad_exposed),
                     dp_params=CommTerm(dp_time - t_grad, param_exposed))
    comm_total = sum(term.total for term in comm.terms().values())
    time = TrainTime(compute=compute, communication_exposed=comm_exposed, pipeline_bubble=bubble, optimizer=t_opt,
                     gradient_compression=t_compress, offload_transfer=offload_exposed)

    # --- bytes per link per GPU per step ----------------------------------------------------
    per_mb = [(b_tp, in_tp), (b_cp, in_cp), (b_ep_out, False), (b_ep_in, has_up), (b_pp, in_pp)]
    per_step = [(b_dp, in_dp), (b_edp, in_edp)]
    scale_up = sum(m * xp.where(i, b, 0.0) for b, i in per_mb) + sum(xp.where(i, b, 0.0) for b, i in per_step)
    scale_out = sum(m * xp.where(i, 0.0, b) for b, i in per_mb) + sum(xp.where(i, 0.0, b) for b, i in per_step)
    # HBM traffic estimate: weights read three times per micro-batch (forward, two backward GEMMs),
    # stored activations written once and read once, plus the optimizer's state traffic.
    hbm = (m * (3.0 * memory.weights * xp.where(zero == 3, dp, 1.0) + 2.0 * per_layer_act * lps)
           + xp.where(off_opt, 0.0, opt_bytes)
           + xp.where(xp.asarray(grad_compression) > 1.0, 3.0 * (grads_d + grads_e), 0.0) + quant_hbm)
    host = grads_down + params_up + m * act_swap
    bytes_by_link = LinkBytes(hbm=hbm, scale_up=scale_up, scale_out=scale_out, host=host)

    link = lambda intra: xp.where(intra, "scale-up", "scale-out")  # noqa: E731
    pieces = TrainPieces(
        micro_batches=m, pp=pp, virtual_stages=v, dp=dp, layers_per_stage=lps, compute_mb_s=t_c,
        first_stage_mb_s=stage_c[0], middle_stage_mb_s=stage_c[1], last_stage_mb_s=stage_c[2],
        backward_mb_s=t_bwd, grad_overlap_s=overlap_s,
        recompute_mb_s=t_c * (hw_flops_kernels - model_flops) / hw_flops_kernels, flops_mb=per_gpu_mb,
        backward_flop_share=bwd_share, recompute_flop_share=(hw_flops_kernels - model_flops) / hw_flops_kernels,
        tp_allreduces_per_layer=n_ar, tp_mb_s=t_tp, cp_mb_s=t_cp, ep_mb_s=t_ep, pp_mb_s=t_pp,
        tp_exposed_mb_s=tp_exp, ep_exposed_mb_s=ep_exp, pp_exposed_mb_s=pp_exp,
        tp_mb_bytes=b_tp, cp_mb_bytes=b_cp, ep_mb_bytes=b_ep, ep_mb_scaleout_bytes=b_ep_out, pp_mb_bytes=b_pp, tp_link=link(in_tp),
        cp_link=link(in_cp), ep_link=link(in_ep), pp_link=link(in_pp), dp_link=link(in_dp), edp_link=link(in_edp),
        grad_sync_s=t_grad, dp_grad_bytes=b_gd, edp_grad_bytes=b_ge, dense_grad_bytes=grads_d, param_gather_s=t_gather,
        dp_gather_bytes=gather_bus_factor(dp) * params_d, edp_gather_bytes=gather_bus_factor(dp / ep) * params_e,
        compress_s=t_compress,
        compress_hbm_bytes=xp.where(xp.asarray(grad_compression) > 1.0, 3.0 * (grads_d + grads_e), 0.0) + quant_hbm,
        grads_to_host_bytes=grads_down, params_from_host_bytes=params_up, act_swap_bytes=act_swap,
        grads_to_host_s=t_down, params_from_host_s=t_up, act_swap_s=t_swap, host_bw=host_bw,
        optimizer_bytes=opt_bytes, optimizer_s=t_opt, offload_optimizer=off_opt, offload_activations=off_act,
        act_layer_bytes=per_layer_act, act_mb_bytes=per_layer_act * lps, zero=zero, recompute=recompute,
        nvme_exposed_s=nvme_exposed,
        stage0_extra_bytes=extras.first_stage_transient + memory.network_buffers + memory.runtime,
        last_stage_extra_bytes=extras.last_stage_transient + memory.network_buffers + memory.runtime)
    return TrainStep(
        pieces=pieces, dp=dp, micro_batches=m, memory=memory, memory_total=memory_total, model_flops=model_flops,
        hardware_flops=hw_flops, time=time, time_total=total, comm=comm,
        communication_total=comm_total, communication_overlapped=sum(t.overlapped for t in comm.terms().values()), dp_comm_time=dp_time,
        backward_time_last_micro_batch=t_bwd,
        pipeline_bubble_fraction=safe_div(bubble, pipeline),  # of the pipeline phase: (p-1)/(m+p-1) for 1F1B
        mfu=model_flops / (total * gpus * mfu_peak(peak, hw)), mfu_format_peak=model_flops / (total * gpus * peak),
        tokens_per_s=tokens / total, bytes_by_link=bytes_by_link,
        tokens=tokens, host_bytes=host_bytes, nvme_bytes=nvme_bytes, nvme_traffic_bytes=nvme_read + nvme_write,
        compute_share=compute / total, bandwidth_share=(comm_exposed + t_opt + t_compress + offload_exposed) / total)
