"""LoRA and QLoRA fine-tuning: the adapters' parameters and FLOPs, and the frozen base's bytes. Vectorised.

LoRA (Hu et al. 2021, §4.1) freezes a weight W (d_in x d_out) and trains W + BA with A (r x d_in) and B
(d_out x r): r·(d_in + d_out) trainable parameters per adapted matrix. On GPT-3 175B with Wq and Wv adapted in all
96 layers (d = 12,288) that is 2 x 96 x 12,288 x 2r: 4.7M at r = 1 and 37.7M at r = 8 (Table 4; §7.1's 18M budget
is r = 4). Targets (`LORA_TARGETS`): "qv" (the paper's choice), "qkvo" (every attention projection), "all" (every
linear layer of the blocks, attention and MLP: QLoRA §4's choice; on MoE layers every routed and shared expert's
matrices, the router left frozen).

Step time: the frozen base still runs its forward (2·N FLOPs per token) and the backward's input gradients (2·N),
but no weight gradients; the adapters add 2·N_a forward and 4·N_a backward per token, with N_a the adapter
parameters a token passes through (MoE: the routed top-k experts' adapters). Memory: the adapters carry the
training format's weights, gradients, master copy and optimizer states; the frozen base only its weights: 16-bit,
or, under QLoRA (Dettmers et al. 2023 §3), the blocks' linear weights in NF4 with double quantisation
(dtypes.WEIGHT_FORMAT["nf4_dq"]: 4.127 bits per weight) and the embeddings, head and norms in 16 bits.
Activations are as for full training (the adapters' r-wide intermediates are left out: r/h of a layer input).
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars
from trinity_desktop.model.base.dtypes import BYTES_PER_ELEMENT
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.inputs.scenario import LORA_TARGETS

LORA_TARGET_CODE = {name: i for i, name in enumerate(LORA_TARGETS)}
NF4_BYTES = BYTES_PER_ELEMENT["nf4_dq"]  # QLoRA §3: NF4 in blocks of 64, FP8 constants in blocks of 256


@dataclass(frozen=True)
class AdapterParams:
    """Adapter parameters of the whole model: `dense` (attention, dense MLPs, shared experts), `expert` (routed
    experts, sharded by EP) and `active` (what one token passes through: the top-k routed experts)."""

    dense: object
    expert: object
    active: object

    @property
    def total(self):
        return self.dense + self.expert


def adapter_params(arch: Architecture, rank, targets) -> AdapterParams:
    """r·(d_in + d_out) per adapted matrix (Hu et al. 2021 §4.1), summed over the layers. `rank` and `targets`
    (codes of LORA_TARGETS) broadcast; rank 0 gives none. Attention shapes: Wq h → heads·d_head, Wk and Wv
    h → kv_heads·d_head (GQA), Wo heads·d_head → h."""
    r = xp.asarray(rank, dtype=float)
    code = xp.asarray(targets)
    h, a, d = float(arch.hidden), float(arch.heads), float(arch.head_dim)
    kv = float(arch.kv_heads) * d
    qv = (h + a * d) + (h + kv)
    qkvo = qv + (h + kv) + (a * d + h)
    attn = xp.where(code == 0, qv, qkvo) * arch.layers
    mlp_all = code == 2
    n_mats = 3.0 if arch.gated_mlp else 2.0
    n_moe = arch.moe_layers
    dense_mlp = (arch.layers - n_moe) * n_mats * (h + arch.ffn_hidden)
    f_moe = float(arch.moe_ffn_hidden or arch.ffn_hidden)
    expert_mat = n_mats * (h + f_moe)
    dense = attn + xp.where(mlp_all, dense_mlp + n_moe * arch.shared_experts * expert_mat, 0.0)
    expert = xp.where(mlp_all, n_moe * arch.experts * expert_mat, 0.0)
    active = dense + xp.where(mlp_all, n_moe * arch.experts_per_token * expert_mat, 0.0)
    return AdapterParams(dense=r * dense, expert=r * expert, active=r * active)


def quantised_share(arch: Architecture) -> float:
    """Share of the parameters QLoRA stores in NF4: the blocks' linear weights (everything but the embeddings,
    the output head and the norms), which bitsandbytes' Linear4bit replaces."""
    norms = (2 * arch.layers + 1) * arch._norm_params()
    return (arch.params_total() - arch.embedding_params() - norms) / arch.params_total()


def frozen_weight_bytes(arch: Architecture, params, weight_bytes, qlora):
    """Bytes of `params` frozen base parameters: all at `weight_bytes` (LoRA), or the linear share in NF4 + double
    quantisation and the rest at `weight_bytes` (QLoRA)."""
    share = quantised_share(arch)
    nf4 = params * (share * NF4_BYTES + (1.0 - share) * xp.asarray(weight_bytes, dtype=float))
    return xp.where(xp.asarray(qlora, dtype=bool), nf4, params * weight_bytes)


@dataclass(frozen=True)
class LoraFlops:
    """A LoRA step's FLOPs against full training's: `model` and `hardware` (recomputation kept), and the
    backward's part of the model FLOPs."""

    model: object
    hardware: object
    backward: object


def lora_flops(arch: Architecture, rank, targets, tokens, fwd_per_token, attn_per_token, model_flops, hw_flops,
               on) -> LoraFlops:
    """Full training's FLOPs where `on` is False; else without the frozen weights' gradients (the linear part of
    the forward, fwd - attention core, once per token) and with the adapters' 6·N_a per token (module docstring).
    Backward part: 2 x forward (full training), or input gradients 2·(fwd) + 4·N_a (LoRA)."""
    on = xp.asarray(on, dtype=bool)
    tokens = xp.asarray(tokens, dtype=float)
    n_a = adapter_params(arch, rank, targets).active
    saved = (fwd_per_token - attn_per_token) * tokens
    extra = 6.0 * n_a * tokens
    model = xp.where(on, model_flops - saved + extra, model_flops)
    hardware = xp.where(on, hw_flops - saved + extra, hw_flops)
    backward = xp.where(on, model_flops * 2.0 / 3.0 - saved + 4.0 * n_a * tokens, model_flops * 2.0 / 3.0)
    return LoraFlops(model=model, hardware=hardware, backward=backward)


def qlora_dequant_s(arch: Architecture, frozen_params, qlora, recompute, hbm_rate):
    """Seconds per micro-batch QLoRA spends dequantising the NF4 base to BF16 before each GEMM pass (QLoRA §3:
    "dequantize the storage data type to the computation data type to perform the forward and backward pass"):
    read NF4, write BF16, once in the forward, once for the backward's input gradients, once more when full
    recomputation repeats the forward (stated pass count; the GEMMs' own reads are in their kernel time)."""
    passes = 2.0 + (xp.asarray(recompute) == 2)
    quantised = frozen_params * quantised_share(arch)
    return xp.where(xp.asarray(qlora, dtype=bool), passes * quantised * (NF4_BYTES + 2.0) / hbm_rate, 0.0)
