"""A transformer's shape and its exact parameter count.

Counts follow the layer structure directly (embeddings, attention, MLP or mixture of experts, norms,
biases, output head) so that presets reproduce the published totals: Llama-2-7B 6.74B, Llama-3-8B 8.03B,
GPT-3 174.6B (Brown et al. 2020), DeepSeek-V3 671B total / 37B active (DeepSeek-AI 2024).
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.base.ranges import ARCHITECTURE_RULES, check_all

ATTENTION_TYPES = ("mha", "gqa", "mqa", "mla")


@dataclass(frozen=True)
class Architecture:
    key: str
    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn_hidden: int
    vocab: int
    gated_mlp: bool = True
    tied_embeddings: bool = False
    experts: int = 1
    experts_per_token: int = 1
    attention: str = "mha"
    norm: str = "rmsnorm"
    linear_bias: bool = False
    position: str = "rope"
    max_seq: int = 4096
    sliding_window: int = 0
    # Layers that attend to the whole context in a model with a sliding window (Gemma-2 alternates local and
    # global layers); 0 = every layer uses the window (Mistral 7B).
    global_layers: int = 0
    moe_ffn_hidden: int = 0
    shared_experts: int = 0
    dense_layers: int = 0
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    # multi-token-prediction modules trained beside the model (DeepSeek-V3 §2.2; HF config num_nextn_predict_layers)
    mtp_depth: int = 0
    params_published: float = 0.0
    params_active_published: float = 0.0
    source: str = ""
    status: str = ""
    note: str = ""

    def __post_init__(self):
        for name in ("layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab",
                     "experts", "experts_per_token", "max_seq"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValidationError(f"{self.key}.{name}", value, "a whole number >= 1")
        for name in ("sliding_window", "global_layers", "mtp_depth"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValidationError(f"{self.key}.{name}", value, "a whole number >= 0")
        if self.global_layers > self.layers:
            raise ValidationError(f"{self.key}.global_layers", self.global_layers, f"at most layers ({self.layers})")
        if self.attention not in ATTENTION_TYPES:
            raise ValidationError(f"{self.key}.attention", self.attention, "one of " + ", ".join(ATTENTION_TYPES))
        if self.heads % self.kv_heads:
            raise ValidationError(f"{self.key}.kv_heads", self.kv_heads, f"a divisor of heads ({self.heads})")
        if self.experts_per_token > self.experts:
            raise ValidationError(f"{self.key}.experts_per_token", self.experts_per_token,
                                  f"at most experts ({self.experts})")
        if self.attention == "mla" and not (self.kv_lora_rank and self.qk_rope_head_dim and self.v_head_dim):
            raise ValidationError(f"{self.key}.kv_lora_rank", self.kv_lora_rank,
                                  "MLA needs kv_lora_rank, qk_rope_head_dim and v_head_dim > 0")
        if self.norm not in ("rmsnorm", "layernorm"):
            raise ValidationError(f"{self.key}.norm", self.norm, "rmsnorm or layernorm")
        if self.position not in ("rope", "learned"):
            raise ValidationError(f"{self.key}.position", self.position, "rope or learned")
        check_all(self, f"{self.key}.", ARCHITECTURE_RULES)
        if self.dense_layers > self.layers:
            raise ValidationError(f"{self.key}.dense_layers", self.dense_layers, f"at most layers ({self.layers})")

    # --- shapes -------------------------------------------------------------------------------
    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    @property
    def qk_dim(self) -> int:
        """Per-head width of queries and keys (MLA: no-RoPE part plus RoPE part)."""
        if self.attention == "mla":
            return self.qk_nope_head_dim + self.qk_rope_head_dim
        return self.head_dim

    @property
    def v_dim(self) -> int:
        return self.v_head_dim if self.attention == "mla" else self.head_dim

    @property
    def kv_width(self) -> int:
        """Width of one of K or V per token per layer (n_kv x d_head); for MLA, the shared latent."""
        if self.attention == "mla":
            return self.kv_lora_rank + self.qk_rope_head_dim
        return self.kv_heads * self.head_dim

    @property
    def kv_tensors(self) -> int:
        """Tensors cached per layer: K and V are two (vLLM §3); MLA caches one compressed latent."""
        return 1 if self.attention == "mla" else 2

    @property
    def window_layer_share(self) -> float:
        """Share of the layers whose attention and KV cache are limited to `sliding_window` tokens (0 without
        a window): (layers - global_layers) / layers."""
        if self.sliding_window <= 0:
            return 0.0
        return (self.layers - self.global_layers) / self.layers

    # --- parameter counts ---------------------------------------------------------------------
    def _norm_params(self) -> int:
        return (2 if self.norm == "layernorm" else 1) * self.hidden

    def attention_params(self) -> int:
        """Q, K, V and output projections of one layer (plus biases; MLA's low-rank factors and norms)."""
        h, a = self.hidden, self.heads
        if self.attention == "mla":
            q_out = a * self.qk_dim
            if self.q_lora_rank:
                q = h * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * q_out
            else:
                q = h * q_out
            kv = (h * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank
                  + self.kv_lora_rank * a * (self.qk_nope_head_dim + self.v_head_dim))
            return q + kv + a * self.v_head_dim * h
        q = h * a * self.head_dim
        kv = 2 * h * self.kv_heads * self.head_dim
        o = a * self.head_dim * h
        bias = (a * self.head_dim + 2 * self.kv_heads * self.head_dim + h) if self.linear_bias else 0
        return q + kv + o + bias

    def mlp_params(self, ffn: int | None = None) -> int:
        """One MLP: gated (SwiGLU, three matrices) or plain (two matrices), plus biases."""
        f = self.ffn_hidden if ffn is None else ffn
        h = self.hidden
        weights = (3 if self.gated_mlp else 2) * h * f
        bias = ((2 * f if self.gated_mlp else f) + h) if self.linear_bias else 0
        return weights + bias

    def moe_layer_params(self) -> tuple[int, int]:
        """(total, active) MLP parameters of one MoE layer: routed experts, shared experts, router."""
        f = self.moe_ffn_hidden or self.ffn_hidden
        expert = self.mlp_params(f)
        router = self.hidden * self.experts
        total = self.experts * expert + self.shared_experts * expert + router
        active = self.experts_per_token * expert + self.shared_experts * expert + router
        return total, active

    def embedding_params(self) -> int:
        """Token embeddings, learned positions, and the output head when untied."""
        emb = self.vocab * self.hidden
        pos = self.max_seq * self.hidden if self.position == "learned" else 0
        head = 0 if self.tied_embeddings else self.vocab * self.hidden
        return emb + pos + head

    def lookup_params(self) -> int:
        """Parameters read by table lookup, not multiplied: the input embedding (when the head is not tied
        to it) and learned positions. A decode step reads only the rows of its tokens."""
        token = 0 if self.tied_embeddings else self.vocab * self.hidden
        pos = self.max_seq * self.hidden if self.position == "learned" else 0
        return token + pos

    def layer_params(self) -> tuple[int, int, int]:
        """(dense-layer params, MoE-layer total params, MoE-layer active params) for one layer each."""
        common = self.attention_params() + 2 * self._norm_params()
        dense = common + self.mlp_params()
        moe_total, moe_active = self.moe_layer_params() if self.is_moe else (0, 0)
        return dense, common + moe_total, common + moe_active

    def params_total(self) -> int:
        dense, moe_total, _ = self.layer_params()
        n_dense = self.layers - self.moe_layers
        return n_dense * dense + self.moe_layers * moe_total + self.embedding_params() + self._norm_params()

    def params_active(self) -> int:
        """Parameters touched per token (MoE: only the routed experts; dense: all)."""
        dense, _, moe_active = self.layer_params()
        n_dense = self.layers - self.moe_layers
        return n_dense * dense + self.moe_layers * moe_active + self.embedding_params() + self._norm_params()

    def mtp_module_params(self) -> tuple[int, int]:
        """(total, routed-expert) parameters of one MTP module (DeepSeek-V3 §2.2): a transformer layer of the
        model's last-layer kind (MoE where the model has MoE layers), the projection M_k (2h -> h) and the RMSNorms
        of its two inputs and of the shared head's input; the embedding and the output head are the main model's."""
        dense, moe_total, _ = self.layer_params()
        layer = moe_total if self.is_moe and self.moe_layers else dense
        routed = self.experts * self.mlp_params(self.moe_ffn_hidden or self.ffn_hidden) if layer == moe_total else 0
        return layer + 2 * self.hidden * self.hidden + 3 * self._norm_params(), routed

    def mtp_matmul_params(self) -> int:
        """Weights one MTP module multiplies per token: its layer's active projections and MLP (routed top-k and
        shared experts) and M_k (2h x h); the shared output head is counted with the main head's."""
        dense, _, moe_active = self.layer_params()
        layer = moe_active if self.is_moe and self.moe_layers else dense
        return layer - 2 * self._norm_params() + 2 * self.hidden * self.hidden

    def expert_params(self) -> int:
        """Parameters in routed experts (sharded by expert parallelism)."""
        if not self.is_moe:
            return 0
        return self.moe_layers * self.experts * self.mlp_params(self.moe_ffn_hidden or self.ffn_hidden)

    def matmul_params_active_per_layer(self) -> float:
        """Weights multiplied per token in one average layer, for FLOP counting (2 FLOPs per weight):
        attention projections plus the active MLP (routed top-k and shared experts)."""
        dense, _, moe_active = self.layer_params()
        n_dense = self.layers - self.moe_layers
        per_layer = (n_dense * dense + self.moe_layers * moe_active) / self.layers
        return per_layer - 2 * self._norm_params()
