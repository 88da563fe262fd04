"""Inference: weights, KV cache, prefill and decode time, per GPU with tensor and pipeline parallelism. Vectorized.

KV cache per token = 2 (K and V) · L · n_kv · d_head · bytes (vLLM §3; the scaling book's 2·bytes·H·K·L);
MLA caches one latent of kv_lora_rank + rope dims per layer (DeepSeek-V2/V3). Each kernel group is
timed with the roofline, max(FLOPs / achievable peak, bytes / achievable HBM bandwidth) (Williams et al.
2009), so decode at small batch is bound by reading the weights and the KV cache. Decode as measured
(formulas/decode_costs.py): every forward pass also pays a fixed cost per layer and one more per step (kernel
launch, synchronisation, sampling: "kernel launch and sync", 49 us per group on GPUs), the decode GEMVs stream the
weights at the runtime's measured rate (llama.cpp on Metal: 1.13 x the assumption, its line's own bandwidth), and
attention reads the paged KV cache at 0.69 of the weight-streaming bandwidth. In MoE decode the dense GEMMs and the routed experts'
GEMMs are separate kernel groups on the roofline: b tokens touch E(1 - (1 - k/E)^b) of the E experts.

Sliding-window attention (the architecture's own `sliding_window`, Mistral 7B §2: a rolling buffer of W tokens;
`global_layers` full-attention layers where a model mixes them): a windowed layer keeps and reads at most W
tokens and a prefill query attends to at most W keys (kv_policy.arch_kept, kv_policy.mean_min), on top of the
KV policy. Mistral-7B at 32k context keeps 4,096 tokens: 0.54 GB of bf16 KV per sequence instead of 4.29 GB.

A request lasts prefill_s + decode_s, decode_s = Σ over its g steps; each step's attention is linear in the
tokens kept, so decode_s = g · (weights + TP + attention at the mean kept over contexts s ... s + g).

KV-cache offload (FlexGen, Sheng et al. 2023): a share f = `kv_offload_fraction` of the KV cache lives in host
DRAM. HBM holds (1 - f) of it; each decode step fetches the offloaded share over the host link,
f · KV read / (host-link bandwidth · η_net), not overlapped with the attention that needs it (the convention
of `residency`), and the fetched bytes are written to HBM before the attention reads them. Prefill writes the
share out over the host link, overlapped with the prefill's compute (what does not hide is exposed). The time
appears as its own entry ("KV fetch (host link)", "KV offload (host link)") only where f > 0.

Prefill computes the LM head for one token per sequence, the last prompt token whose logits are sampled: vLLM
keeps only `selected_token_indices`, TensorRT-LLM gathers context logits only with `gather_context_logits`, and
llama.cpp outputs the last token of a batch unless asked for all (llama_batch logits). Its other s - 1 tokens pass
only the layers: 2 · (L · W_layer · b · s + h · V · b) FLOPs (key "prefill-last-token-logits").

Prefix caching (vLLM automatic prefix caching; PagedAttention shares prefix blocks, vllm §4.4): a share
h = `prefix_hit_fraction` of each prompt is already in the cache, so prefill computes only the s(1 - h) new
tokens (at least one): GEMM FLOPs scale by (1 - h); the new queries attend causally to every earlier key,
on average (s + hs)/2 of them; only the new tokens' KV is written, the cached prefix's KV is read instead.
Memory is unchanged: the prefix's KV is in the cache either way (kept across requests, which is the memory
the technique spends; sharing one copy between the batch's sequences is not credited).

Pipeline parallelism (Pope et al. 2022, "Efficiently Scaling Transformer Inference" §3; vLLM and TensorRT-LLM
pipeline-parallel serving; point-to-point sends as in Narayanan et al. 2021): a deployment of tp x pp GPUs, every
stage holding L/pp layers (pp divides the layers), TP inside a stage. Per GPU: weights W/(tp·pp) and the KV of the
stage's layers, b · kept · kv_bytes_per_token · (TP share) / pp (the per-GPU figures are stage averages: the
embedding and the LM head are spread evenly, not placed on the first and the last stage).
- Decode: the b sequences are split into n = min(b, pp) micro-batches of b/n sequences (a mean: b need not be a
  multiple) that circulate through the stages. One slot = one stage's time for one micro-batch over L/pp layers:
  the roofline of its GEMMs (re-reading the stage's weights for every micro-batch), its attention over the
  micro-batch's KV and the TP all-reduces of its layers, plus one point-to-point send of the micro-batch's
  activations (b/n · h · act_bytes, alpha + S/B) over the link the stage boundary crosses (scale-up while tp·pp
  GPUs fit in a node, else scale-out: `comms.link_for_group(pp, tp, ...)`). A token passes all pp stages, so
  TPOT = pp × slot and tokens/s = b / TPOT. With b >= pp every stage is busy in every slot; with b < pp only b
  micro-batches of one sequence exist and pp - b slots of each stage's pp stay idle (bytes and FLOPs per GPU count
  the n busy slots, time counts all pp). The last stage's slot send stands for handing the sampled token ids back
  to the first stage: the pipeline's period is its slowest stage, so every slot carries one send.
- Prefill: one batch of prompts passes stage by stage, with no chunked-prompt pipelining: TTFT = Σ of the pp
  stages (each the roofline of its L/pp layers) + (pp − 1) sends of b · s · h · act_bytes.
pp = 1 gives the tensor-parallel formulas above exactly.
"""

from __future__ import annotations

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars
from trinity_desktop.model.base.numeric import safe_div
from trinity_desktop.model.formulas.allreduce_latency import inference_allreduce_time
from trinity_desktop.model.formulas.comms import link_for_group, p2p_time
from trinity_desktop.model.formulas.decode_costs import fixed_time, runtime_for
from trinity_desktop.model.formulas.decode_kernels import kv_bandwidth, kv_read_multiplier
from trinity_desktop.model.formulas.flops import attention_core_flops_per_token
from trinity_desktop.model.formulas.kernel_efficiency import (
    elementwise_bytes_per_token,
    prefill_attention_rate,
    prefill_gemm_rate,
    runs_fp8,
)
from trinity_desktop.model.formulas.kv_policy import arch_kept, kept_terms, kept_tokens, mean_kept, mean_min
from trinity_desktop.model.formulas.moe_serving import (
    EpTraffic,
    dense_weight_bytes_per_gpu,
    ep_all_to_all,
    expert_weight_bytes_per_gpu,
    serving_ep_on,
)
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.step.layout import RESERVED_FRACTION, InferInputs
from trinity_desktop.model.step.quantities import LinkBytes, record

__all__ = ["RESERVED_FRACTION", "InferMemory", "InferStep", "PhaseTime", "inference_step", "kv_bytes_per_token",
           "kv_share_per_gpu"]


@record
class InferMemory:
    """Bytes per GPU: its share of the weights, of the KV cache kept in HBM, and the runtime reserve."""

    weights: object
    kv_cache: object
    reserved: object


@record
class PhaseTime:
    """Seconds of one phase (the prefill, or one decode step) by part. `pp_comm` and `kv_host` are parts of
    the phase only where the step is pipelined (`InferStep.piped`) or offloads KV (`InferStep.offloading`)."""

    gemms: object      # the weight GEMMs
    attention: object  # attention (KV writes in prefill, KV reads in decode)
    tp_comm: object    # TP all-reduces
    pp_comm: object    # pipeline sends between stages
    kv_host: object    # KV offload (prefill) / fetch (decode) over the host link
    fixed: object      # kernel launch, synchronisation and sampling: per layer and per step (decode_costs)
    ep_comm: object = 0.0  # MoE serving (#23): the EP dispatch + combine all-to-alls (formulas/moe_serving.py)


@record
class InferStep:
    """Everything one inference request computes (per GPU unless stated; FLOPs over all tp x pp GPUs)."""

    weights_bytes: object            # the whole model's weights
    kv_bytes_per_token: object       # the whole model's KV per token
    kv_bytes_per_token_gpu: object   # one GPU's: its TP share of its stage's layers
    kv_bytes: object                 # the batch's KV at the final context, whole model
    kv_host_bytes: object            # per GPU, offloaded to the host (or CXL) tier
    prefill_tokens_computed: object
    memory: InferMemory
    memory_total: object
    prefill_s: object
    time_per_output_token_s: object
    tokens_per_s: object
    decode_s: object
    request_s: object
    decode_kv_read_bytes: object     # per GPU per decode step (its busy slots)
    decode_weights_read_bytes: object  # per GPU per decode step (its busy slots)
    weights_streamed_bytes: object   # one forward pass of a stage's weights, every expert touched
    decode_attention_flops: object
    prefill_time: PhaseTime
    decode_time: PhaseTime
    piped: bool
    offloading: bool
    prefill_flops: object
    decode_flops: object
    prefill_shares: tuple            # (compute-bound, bandwidth-bound) shares of the prefill time
    decode_shares: tuple
    prefill_bytes: LinkBytes
    decode_bytes: LinkBytes
    expert_parallel: bool = False    # MoE serving (#23): EP / DP-attention on somewhere (formulas/moe_serving.py)
    prefill_ep: object = None        # MoE serving (#23): the prefill's EP all-to-all per GPU (moe_serving.EpTraffic)
    decode_ep: object = None         # and one decode step's (its busy slots), per GPU


NO_EP = EpTraffic(0.0, 0.0, 0.0)  # MoE serving off: no all-to-all


def kv_bytes_per_token(arch: Architecture, kv_bytes):
    """KV-cache bytes per token for the whole model: kv_tensors · L · kv_width · bytes."""
    return arch.kv_tensors * arch.layers * arch.kv_width * xp.asarray(kv_bytes, dtype=float)


def kv_share_per_gpu(arch: Architecture, tp):
    """Fraction of the KV cache one TP rank holds: ceil(n_kv / t) / n_kv (KV heads are replicated when
    t > n_kv); MLA's latent is replicated on every rank."""
    tp = xp.asarray(tp, dtype=float)
    if arch.attention == "mla":
        return xp.ones_like(tp)
    return xp.ceil(arch.kv_heads / tp) / arch.kv_heads


def _roofline(flops, nbytes, peak_eff, bw_eff):
    """(time, compute-bound part, bandwidth-bound part) of one kernel group."""
    t_f = flops / peak_eff
    t_b = nbytes / bw_eff
    t = xp.maximum(t_f, t_b)
    return t, xp.where(t_f >= t_b, t, 0.0), xp.where(t_f >= t_b, 0.0, t)


def inference_step(arch: Architecture, hw: Hardware, inputs: InferInputs) -> InferStep:
    """One inference request of `arch` on `hw` (the module docstring's model): prefill roofline, decode step
    roofline at the mean context, KV-cache memory and traffic per GPU, pipeline slots. Every field broadcasts
    over the inputs' arrays. Sources: the roofline (Williams et al. 2009), vLLM (Kwon et al. 2023: paging,
    reserve, prefix caching), FlexGen (Sheng et al. 2023: KV offload), Pope et al. 2022 (pipelined serving)."""
    x = inputs
    tp, pp, gpus_per_node, batch = x.tp, x.pp, x.gpus_per_node, x.batch
    prompt_len, gen_len, weight_bytes, kv_bytes, act_bytes = x.prompt_len, x.gen_len, x.weight_bytes, x.kv_bytes, x.act_bytes
    peak, eff_compute, eff_hbm, eff_network = x.peak, x.eff_compute, x.eff_hbm, x.eff_network
    kv_policy, kv_window, kv_sinks = x.kv_policy, x.kv_window, x.kv_sinks
    kv_heavy_ratio, razor_retrieval_fraction = x.kv_heavy_ratio, x.razor_retrieval_fraction
    kv_offload_fraction, prefix_hit_fraction = x.kv_offload_fraction, x.prefix_hit_fraction
    kv_offload_bw, reserved_fraction = x.kv_offload_bw, x.reserved_fraction
    tp = xp.asarray(tp, dtype=float)
    pp = xp.asarray(pp, dtype=float)
    # MoE serving (#23, formulas/moe_serving.py): tp is the attention TP; a stage holds tp x attention_dp GPUs,
    # each attention group a 1/attention_dp share of the batch
    adp = xp.asarray(x.attention_dp, dtype=float)
    stage = tp * adp
    ep_on = serving_ep_on(x.ep, x.attention_dp, x.redundant_experts)
    ep_any = bool(xp.any(ep_on))  # off (the common scalar case): none of the EP terms is computed
    b = xp.asarray(batch, dtype=float)
    n_mb = xp.minimum(b, pp)  # decode micro-batches in flight: pp, or b when b < pp (idle slots)
    b_mb = b / n_mb           # sequences per decode micro-batch (a mean where pp does not divide b)
    s = xp.asarray(prompt_len, dtype=float)
    g = xp.asarray(gen_len, dtype=float)
    L, h = arch.layers, arch.hidden
    peak_eff = peak * eff_compute
    bw_eff = hw.hbm_bw * eff_hbm
    runtime = runtime_for(hw.kind, x.decode_runtime)  # fixed costs, streaming and KV rates as measured (decode_costs)
    ar_call = xp.where(tp > 1.0, runtime.allreduce_call_s, 0.0)  # the engine's cost per all-reduce call (decode_costs)
    # decode attention kernel (#22, formulas/decode_kernels.py): its KV-read rate, and reads per KV head
    bw_kv = kv_bandwidth(hw, eff_hbm, x.decode_attention_kernel)
    kv_reads = kv_read_multiplier(arch, x.decode_attention_kernel)
    slot_fixed = fixed_time(runtime, L, pp) * xp.ones_like(b)  # one forward pass of a stage's L/pp layers

    weights_total = arch.params_total() * xp.asarray(weight_bytes, dtype=float)
    weights_gpu = weights_total / (tp * pp)
    # Bytes streamed per forward pass of one stage: every weight but the lookup tables (embeddings, positions).
    streamed_gpu = (arch.params_total() - arch.lookup_params()) * xp.asarray(weight_bytes, dtype=float) / (tp * pp)
    if ep_any:
        ep_experts_gpu = expert_weight_bytes_per_gpu(arch, weight_bytes, x.ep, x.redundant_experts, pp)
        weights_gpu = xp.where(ep_on, dense_weight_bytes_per_gpu(arch, arch.params_total(), weight_bytes, tp, pp)
                               + ep_experts_gpu, weights_gpu)
        streamed_gpu = xp.where(ep_on, dense_weight_bytes_per_gpu(arch, arch.params_total() - arch.lookup_params(),
                                                                  weight_bytes, tp, pp) + ep_experts_gpu,
                                streamed_gpu)
    kv_tok = kv_bytes_per_token(arch, kv_bytes)
    kv_tok_gpu = kv_tok * kv_share_per_gpu(arch, tp) / pp / adp  # the stage's L/pp layers, its DP group's share
    policy = dict(policy=kv_policy, window=kv_window, sinks=kv_sinks, heavy_ratio=kv_heavy_ratio,
                  retrieval_fraction=razor_retrieval_fraction)
    arch_window, window_share = arch.sliding_window, arch.window_layer_share

    def kept_at(context):  # tokens kept per sequence: the policy, capped by the architecture's own window
        return arch_kept(kept_tokens(context=context, **policy), arch_window, window_share)

    kept_end = kept_at(s + g)
    kv_total = b * kept_end * kv_tok
    f_off = xp.asarray(kv_offload_fraction, dtype=float)
    kv_all_gpu = b * kept_end * kv_tok_gpu
    kv_gpu = kv_all_gpu * (1.0 - f_off)
    kv_host = kv_all_gpu * f_off
    reserved = reserved_fraction * hw.hbm_bytes * xp.ones_like(kv_gpu)
    memory = InferMemory(weights=weights_gpu * xp.ones_like(kv_gpu), kv_cache=kv_gpu, reserved=reserved)
    memory_total = weights_gpu + kv_gpu + reserved
    # The offload target's bandwidth: the host link (host DRAM) by default, or a CXL pool's link.
    host_bw = (hw.host_link_bw if kv_offload_bw is None else kv_offload_bw) * eff_network
    offloading = bool(xp.any(f_off > 0.0))

    W_tok = L * arch.matmul_params_active_per_layer() + h * arch.vocab  # weights multiplied per token
    bw_tp, _, in_tp = link_for_group(tp, 1, gpus_per_node, hw, eff_network)
    bw_pp, al_pp, in_pp = link_for_group(pp, stage, gpus_per_node, hw, eff_network)  # stage boundaries
    piped = pp > 1.0

    # --- prefill: the whole prompt in one pass; causal attention averages s/2 keys per query -------
    # Prefix caching: only the s_new = s(1 - h) uncached tokens (at least one) are computed.
    hit = xp.asarray(prefix_hit_fraction, dtype=float)
    s_new = xp.maximum(s * (1.0 - hit), xp.minimum(s, 1.0))
    s_cached = s - s_new
    tokens = b * s_new
    tok_rank = tokens / adp  # the tokens of one attention DP group
    # Logits of the last prompt token only: an engine samples one token per sequence from the prefill (vLLM's
    # selected_token_indices, TensorRT-LLM without gather_context_logits, llama.cpp's last output), so the LM head
    # multiplies b rows, not b·s (module docstring)
    head_rows = b * xp.ones_like(tokens)
    gemm_f = 2.0 * (L * arch.matmul_params_active_per_layer() * tokens + h * arch.vocab * head_rows) / (stage * pp)
    # keys per new query: the mean causal context (s + s_cached)/2, on windowed layers the mean of min(x, W)
    keys = mean_min(s_cached, s, xp.inf)
    if window_share > 0:
        keys = window_share * mean_min(s_cached, s, float(arch_window)) + (1.0 - window_share) * keys
    attn_f = L * tokens * attention_core_flops_per_token(keys, arch.heads, arch.qk_dim, arch.v_dim) / (stage * pp)
    kept_prefix = kept_at(xp.maximum(s_cached, 1.0)) * (s_cached > 0)
    kv_write = b * xp.maximum(kept_at(s) - kept_prefix, 0.0) * kv_tok_gpu
    kv_prefix_read = b * kept_prefix * kv_tok_gpu
    # prefill GEMMs by shape and GPU family, attention at the flash kernel's forward share (kernel_efficiency)
    pg, pg_c, pg_b = _roofline(gemm_f, streamed_gpu, prefill_gemm_rate(arch, hw, tok_rank, tp, peak, eff_compute,
                                                                         eff_hbm, head_rows / adp), bw_eff)
    pa, pa_c, pa_b = _roofline(attn_f, kv_write + kv_prefix_read, prefill_attention_rate(hw, peak, eff_compute),
                               bw_eff)
    pg_b = pg_b + L / pp * tok_rank * elementwise_bytes_per_token(
        arch, tp, act_bytes=act_bytes, fp8=runs_fp8(peak, hw)) / bw_eff  # norms, activation, FP8 casts
    pg = pg_c + pg_b
    p_tp = L / pp * 2.0 * (inference_allreduce_time(tp, tok_rank * h * act_bytes, bw_tp, hw, gpus_per_node, in_tp)
                           + ar_call)
    # MoE serving (#23): each GPU dispatches and combines its 1/stage share of the chunk's tokens per MoE layer
    ep_args = (x.ep, gpus_per_node, pp, act_bytes, x.moe_fp8_dispatch, x.moe_node_limit, eff_network)
    p_ep_traffic = ep_all_to_all(arch, hw, tokens / stage, *ep_args) if ep_any else NO_EP
    p_ep = p_ep_traffic.time
    # KV offload: the new tokens' offloaded share goes out over the host link behind the prefill's compute.
    p_host_bytes = f_off * kv_write
    p_off = xp.maximum(0.0, safe_div(p_host_bytes, host_bw) - (pg + pa))
    # the prompt batch's activations cross each of the pp - 1 stage boundaries once
    p_pp = (pp - 1.0) * p2p_time(tok_rank * h * act_bytes, bw_pp, al_pp, piped)
    prefill = pp * (pg + pa + p_tp + p_ep + p_off + slot_fixed) + p_pp

    # --- decode: one token per sequence at the average context prompt + gen/2 ------------------
    ctx = s + g / 2.0
    # one slot: one micro-batch of b_mb sequences through one stage's L/pp layers (per GPU)
    d_gemm_f = 2.0 * W_tok * b_mb / (stage * pp)
    if arch.is_moe:  # share of the routed experts touched per layer by b tokens: E(1 - (1 - k/E)^b) / E
        touched = 1.0 - (1.0 - arch.experts_per_token / arch.experts) ** b_mb
        expert_bytes = arch.expert_params() * xp.asarray(weight_bytes, dtype=float) / (tp * pp)
        if ep_any:
            expert_bytes = xp.where(ep_on, ep_experts_gpu, expert_bytes)
        expert_read = expert_bytes * touched
        # each token multiplies k experts' weights: 2 · (k/E) · expert params FLOPs
        expert_f = 2.0 * arch.expert_params() * arch.experts_per_token / arch.experts * b_mb / (stage * pp)
    else:
        expert_bytes = expert_read = expert_f = 0.0 * b
    dense_read = (streamed_gpu - expert_bytes) * xp.ones_like(b)
    weights_read = dense_read + expert_read

    def attention(kept):
        """(time, compute part, bandwidth part, host fetch time, KV bytes read, host bytes, FLOPs) of one decode
        step's attention with `kept` tokens per sequence: every term is proportional to `kept`."""
        kv_once = b_mb * kept * kv_tok_gpu
        kv_read = kv_once * kv_reads  # a per-query-head kernel reads each KV head g times (#22)
        d_host_bytes = f_off * kv_once  # the offloaded share, fetched each step
        d_off = safe_div(d_host_bytes, host_bw)
        # KV formats narrower than 16 bits are converted back before the attention GEMMs: ~2 FLOPs (scale,
        # shift) per element read.
        dequant_f = xp.where(xp.asarray(kv_bytes) < 1.0 + 1e-9, 2.0 * kv_read / xp.asarray(kv_bytes, dtype=float),
                             0.0)
        d_attn_f = (L * b_mb * attention_core_flops_per_token(kept, arch.heads, arch.qk_dim, arch.v_dim) / (stage * pp)
                    + dequant_f)
        return (*_roofline(d_attn_f, kv_read, peak_eff, bw_kv), d_off, kv_read, d_host_bytes, d_attn_f)

    da, da_c, da_b, d_off, kv_read, d_host_bytes, d_attn_f = attention(kept_at(ctx))
    # Each kernel group on its own roofline: the dense GEMMs (attention projections, shared experts, LM head) see
    # all b tokens, the routed experts' GEMMs see b·k tokens spread over the experts touched, so they turn
    # compute-bound at a different batch.
    # decode GEMVs stream the weights at the runtime's measured rate (decode_costs: its line's own B_eff)
    bw_w = bw_eff * runtime.weight_stream_ratio
    dd, dd_c, dd_b = _roofline(d_gemm_f - expert_f, dense_read, peak_eff, bw_w)
    de, de_c, de_b = _roofline(expert_f, expert_read, peak_eff, bw_w)
    dg, dg_c, dg_b = dd + de, dd_c + de_c, dd_b + de_b
    d_tp = L / pp * 2.0 * (inference_allreduce_time(tp, b_mb / adp * h * act_bytes, bw_tp, hw, gpus_per_node,
                                                       in_tp) + ar_call)
    d_pp = p2p_time(b_mb / adp * h * act_bytes, bw_pp, al_pp, piped)  # the micro-batch to the next stage
    # MoE serving (#23): per slot
    d_ep_traffic = ep_all_to_all(arch, hw, b_mb / stage, *ep_args, decode=True) if ep_any else NO_EP
    d_ep = d_ep_traffic.time
    tpot = pp * (dg + da + d_tp + d_ep + d_off + d_pp + slot_fixed)  # a token passes all pp stages, one slot each
    # The request's g decode steps attend to contexts s ... s + g: their attention time is linear in the tokens
    # kept, so the sum is g steps at the mean kept over that range (kv_policy.mean_kept; = kept at s + g/2 for
    # the full cache). One home for the request time: model/views/stages.py draws its decode groups the same way.
    terms = kept_terms(kv_policy, kv_window, kv_sinks, kv_heavy_ratio, razor_retrieval_fraction, arch_window,
                       window_share)
    da_mean, _, _, d_off_mean, _, _, _ = attention(mean_kept(terms, s, s + g))
    decode_s = g * (pp * (dg + d_tp + d_ep + da_mean + d_off_mean + d_pp + slot_fixed))

    # Bytes per GPU: over the prefill (the GPU's stage), and per decode step (its n busy slots).
    tp_bytes_prefill = L / pp * 2.0 * 2.0 * (tp - 1.0) / tp * tok_rank * h * act_bytes
    tp_bytes_decode = n_mb * (L / pp * 2.0 * 2.0 * (tp - 1.0) / tp * b_mb / adp * h * act_bytes)
    # pipeline sends: every stage but the last sends its activations on (the mean over the pp stages)
    pp_bytes_prefill = (pp - 1.0) / pp * tok_rank * h * act_bytes
    pp_bytes_decode = n_mb * (pp - 1.0) / pp * b_mb / adp * h * act_bytes
    piped_any = bool(xp.any(piped))
    decode_ep = EpTraffic(pp * d_ep, n_mb * d_ep_traffic.scale_out, n_mb * d_ep_traffic.scale_up)  # per step
    zero = 0.0 * pp
    prefill_time = PhaseTime(gemms=pp * pg, attention=pp * pa, tp_comm=pp * p_tp,
                             pp_comm=p_pp if piped_any else zero, kv_host=pp * p_off if offloading else zero,
                             fixed=pp * slot_fixed, ep_comm=pp * p_ep)
    decode_time = PhaseTime(gemms=pp * dg, attention=pp * da, tp_comm=pp * d_tp,
                            pp_comm=pp * d_pp if piped_any else zero, kv_host=pp * d_off if offloading else zero,
                            fixed=pp * slot_fixed, ep_comm=pp * d_ep)

    def links(hbm, tp_bytes, pp_bytes, host, ep) -> LinkBytes:
        return LinkBytes(hbm=hbm, scale_up=xp.where(in_tp, tp_bytes, 0.0) + xp.where(in_pp, pp_bytes, 0.0)
                         + ep.scale_up,
                         scale_out=xp.where(in_tp, 0.0, tp_bytes) + xp.where(in_pp, 0.0, pp_bytes) + ep.scale_out,
                         host=host * xp.ones_like(tp_bytes))

    return InferStep(
        weights_bytes=weights_total, kv_bytes_per_token=kv_tok, kv_bytes_per_token_gpu=kv_tok_gpu,
        kv_bytes=kv_total, kv_host_bytes=kv_host, prefill_tokens_computed=tokens, memory=memory,
        memory_total=memory_total, prefill_s=prefill, time_per_output_token_s=tpot, tokens_per_s=b / tpot,
        decode_s=decode_s, request_s=prefill + decode_s, decode_kv_read_bytes=n_mb * kv_read,
        decode_weights_read_bytes=n_mb * weights_read, weights_streamed_bytes=streamed_gpu,
        decode_attention_flops=n_mb * d_attn_f * stage * pp, prefill_time=prefill_time, decode_time=decode_time,
        piped=piped_any, offloading=offloading,
        prefill_flops=(gemm_f + attn_f) * stage * pp, decode_flops=n_mb * (d_gemm_f + d_attn_f) * stage * pp,
        prefill_shares=((pg_c + pa_c) * pp / prefill,
                        ((pg_b + pa_b + p_tp + p_ep + p_off + slot_fixed) * pp + p_pp) / prefill),
        decode_shares=((dg_c + da_c) * pp / tpot,
                       (dg_b + da_b + d_tp + d_ep + d_off + d_pp + slot_fixed) * pp / tpot),
        prefill_bytes=links(streamed_gpu + kv_write + kv_prefix_read, tp_bytes_prefill, pp_bytes_prefill,
                            p_host_bytes, p_ep_traffic),
        decode_bytes=links(n_mb * (weights_read + kv_read + d_host_bytes), tp_bytes_decode, pp_bytes_decode,
                           n_mb * d_host_bytes, decode_ep),
        expert_parallel=bool(xp.any(ep_on)), prefill_ep=EpTraffic(pp * p_ep, p_ep_traffic.scale_out,
                                                                  p_ep_traffic.scale_up), decode_ep=decode_ep)
