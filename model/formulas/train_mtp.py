"""Multi-token prediction in training (DeepSeek-V3 §2.2): D sequential modules on the last pipeline stage.

Module k takes the main model's (or module k-1's) last hidden state and the embedding of token i+k, RMSNorms
both, concatenates them and projects 2h -> h with M_k, runs one transformer block and predicts token i+k+1
through the output head shared with the main model; the MTP loss is averaged over the modules and weighted by
λ (0.3, then 0.1; Megatron-Bridge's DeepSeek-V3 recipe: mtp_num_layers 1, mtp_loss_scaling_factor 0.1).
D = `Architecture.mtp_depth` (DeepSeek-V3: 1, config.json num_nextn_predict_layers); 0 = none.

Per token and module, forward (the training step multiplies by 3, as for every layer):
  FLOPs = 2 · (the block's active weights + 2h²) + the block's attention core + 2 · h · V (one more head GEMM)
The block is of the model's MoE kind where the model has MoE layers (DeepSeek-V3's MTP block is an MoE layer).
Memory-bound passes: the block's as a layer's, one more cross-entropy over the logits.
Where it sits: DeepSeek-V3 and Megatron-Bridge place the module with the loss on the last stage (Megatron-Bridge's
PP 16 layout: the last stage holds one decoder layer, the MTP module and the loss). Its compute is the last
stage's, with the output head's (train_compute.busiest_stage); its TP and EP traffic is stage-averaged; its
parameters, one micro-batch of its activations and the saved log-softmax of its loss are held by the last stage.
"""

from __future__ import annotations

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars

# Each loss keeps its fp32 log-softmax (4 B per logit) from its forward to its backward; the backward's gradient
# buffers (memory.LOSS_BYTES_PER_LOGIT's other 8 B) are live for one loss at a time (the losses run in turn)
SAVED_LOGIT_BYTES = 4.0


def mtp_forward_flops_per_token(arch, depth, attn_layer):
    """(block FLOPs, head FLOPs) of D MTP modules' forward per token: 2 x the block's matmul weights (its layer and
    M_k, Architecture.mtp_matmul_params) + one layer's attention core `attn_layer`, and 2·h·V for the shared head."""
    d = xp.asarray(depth, dtype=float)
    return d * (2.0 * arch.mtp_matmul_params() + attn_layer), d * 2.0 * arch.hidden * arch.vocab


def mtp_stage_params(arch, depth, tp, ep):
    """(dense, routed-expert) MTP parameters per GPU of the last stage: D modules (Architecture.mtp_module_params),
    TP-sharded, the routed experts EP-sharded too."""
    total, routed = arch.mtp_module_params()
    d = xp.asarray(depth, dtype=float)
    tp, ep = xp.asarray(tp, dtype=float), xp.asarray(ep, dtype=float)
    return d * (total - routed) / tp, d * routed / (tp * ep)


def mtp_saved_logits_bytes(micro_batch, s_local, vocab, tp, depth):
    """Bytes the D MTP losses add to the last stage's loss peak: each keeps its saved fp32 log-softmax,
    b·s·(V/t) x SAVED_LOGIT_BYTES."""
    return (xp.asarray(depth, dtype=float) * xp.asarray(micro_batch, dtype=float) * xp.asarray(s_local, dtype=float)
            * float(vocab) / xp.asarray(tp, dtype=float) * SAVED_LOGIT_BYTES)
