"""Scenario controls: hardware, cluster, model, workload, parallelism, memory options, batch and lengths.

The panel only reports edits (`edited`, a dict of Scenario field changes, with `hardware` and `model` given
as preset keys; choosing hardware also sets `gpus_per_node` to its `gpus_per_node_default`; switching between
training and inference brings back the GPU count and PP last used for that kind of workload) and shows the scenario it
is handed; the app validates and applies.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model import Architecture, Hardware, Scenario, ValidationError
from trinity_desktop.model.base.dtypes import (
    KV_DTYPES,
    OPTIMIZER_STATE_BYTES,
    TRAIN_PRECISIONS,
    WEIGHT_FORMATS,
)
from trinity_desktop.model.base.ranges import SCENARIO_LIMITS as LIMITS
from trinity_desktop.model.formulas.kv_policy import KV_POLICIES
from trinity_desktop.model.inputs.assumptions import SETS, efficiency_of
from trinity_desktop.model.inputs.presets import model_presets
from trinity_desktop.model.inputs.scenario import MAX_CONTEXT_TOKENS, RECOMPUTE
from trinity_desktop.ui import named_combo, theme
from trinity_desktop.ui.serving_section import SERVING_FIELDS, ServingSection  # the Serving section (#23)

KINDS = (("train", "Training step"), ("prefill", "Inference: prefill"), ("decode", "Inference: decode"))

CONTEXT_MAX = MAX_CONTEXT_TOKENS  # tokens per sequence, prompt + generated
_SPINS = {
    # field: (label, tooltip, group); the range comes from the one table (model/base/ranges.py SCENARIO_LIMITS)
    "gpus": ("GPUs", "Total devices. Training: TP x PP x CP x DP. Inference: TP x PP (one replica; "
             "tensor parallel over GPUs / PP).", "cluster"),
    "gpus_per_node": ("GPUs per node", "Devices sharing the scale-up fabric (NVLink, Infinity Fabric, ICI).",
                      "cluster"),
    "tp": ("Tensor parallel (TP)", "Megatron-LM tensor parallelism: splits every layer; must divide the heads.",
           "train"),
    "pp": ("Pipeline parallel (PP)", "Pipeline stages, each holding layers / PP. Training: 1F1B schedule, the "
           "bubble is (p-1)/(m+p-1) with equal stages; the slowest stage (the first holds the embedding, the "
           "last the output head) paces the others. Inference: the batch circulates as PP micro-batches, a token takes PP stage slots "
           "(time per output token = PP x slot); GPUs / PP is the tensor-parallel degree.", "cluster"),
    "virtual_stages": ("Virtual stages (interleaved)",
                       "Interleaved 1F1B (Narayanan et al. 2021): model chunks per pipeline stage. The bubble shrinks "
                       "to (p-1)/(v·m), the pipeline sends grow v-fold; needs PP >= 2, layers divisible by PP x v "
                       "and micro-batches a multiple of PP.", "train"),
    "cp": ("Context parallel (CP)", "Splits the sequence across devices (ring attention).", "train"),
    "ep": ("Expert parallel (EP)", "Splits MoE experts across data-parallel ranks.", "train"),
    "seq_len": ("Sequence length", "Tokens per training sequence.", "train"),
    "micro_batch": ("Micro-batch", "Sequences per micro-batch per data-parallel rank.", "train"),
    "global_batch": ("Global batch", "Sequences per optimizer step (micro-batch x DP x micro-batches).",
                     "train"),
    "batch": ("Batch (sequences)", "Concurrent sequences decoded together.", "infer"),
    "prompt_len": ("Prompt length", "Prompt tokens per sequence (prefill).", "infer"),
    "gen_len": ("Generated tokens", "Output tokens per sequence (decode).", "infer"),
    # speculative decoding (#23)
    "draft_tokens": ("Draft tokens (γ)", "Tokens the draft model proposes per target step; the target verifies "
                     "γ + 1 tokens per sequence in one pass (Leviathan et al. 2023). MTP proposes one per module.",
                     "infer"),
    # load and latency targets (#23)
    "prefill_chunk_tokens": ("Tokens per step (chunked prefill)", "Token budget of one engine step with a request "
                             "rate: the decodes first, then prompt chunks (vLLM max_num_batched_tokens, default 2048).",
                             "infer"),
    # MoE serving (#23, model/formulas/moe_serving.py)
    "inference_ep": ("Serving EP", "Expert parallelism over a pipeline stage's GPUs: 1 (off, experts split with "
                     "TP) or GPUs / PP (DeepSeek-V3 serves with EP32 for prefill, EP320 for decode). Adds the "
                     "dispatch and combine all-to-all per MoE layer.", "infer"),
    "attention_dp": ("DP-attention", "Attention data-parallel groups, each with the whole attention and a share of "
                     "the batch and KV cache; attention TP = GPUs / (PP x groups) must divide the heads. Needs "
                     "serving EP.", "infer"),
    "redundant_experts": ("Redundant experts", "Extra copies of heavy-load experts per GPU (DeepSeek-V3 prefill: "
                          "8 + 1 per GPU). Needs serving EP.", "infer"),
    # disaggregated prefill and decode (#23)
    "prefill_gpus": ("Prefill pool GPUs", "Disaggregated serving (DistServe, Splitwise): GPUs that only prefill; "
                     "each request's KV cache then moves to the decode pool. Off = aggregated serving.", "infer"),
    "decode_gpus": ("Decode pool GPUs", "GPUs that only decode, fed by the prefill pool. Off = aggregated.", "infer"),
    "prefill_tp": ("Prefill instance TP", "Tensor parallelism of each prefill instance; as replica = GPUs / PP.",
                   "infer"),
    "prefill_pp": ("Prefill instance PP", "Pipeline stages of each prefill instance; as replica = PP.", "infer"),
    "decode_tp": ("Decode instance TP", "Tensor parallelism of each decode instance; as replica = GPUs / PP.",
                  "infer"),
    "decode_pp": ("Decode instance PP", "Pipeline stages of each decode instance; as replica = PP.", "infer"),
}
# what a spin box whose 0 means "off" or "as the replica" shows at 0 (disaggregated serving, #23)
_SPIN_ZERO_TEXT = {"prefill_gpus": "off", "decode_gpus": "off", "prefill_tp": "as replica",
                   "prefill_pp": "as replica", "decode_tp": "as replica", "decode_pp": "as replica"}
_COMBOS = {
    "zero": ("ZeRO stage", [(0, "0: replicate all"), (1, "1: shard optimizer"), (2, "2: + gradients"),
                            (3, "3: + weights (FSDP)")],
             "ZeRO (Rajbhandari et al. 2020): states sharded over the data-parallel degree.", "train"),
    "recompute": ("Activation recompute", [(r, r) for r in RECOMPUTE],
                  "Korthikanti et al. 2022: selective recomputes attention; full stores only layer inputs.", "train"),
    "precision": ("Training precision", [(p, p) for p in TRAIN_PRECISIONS],
                  "Number format of weights, gradients and GEMMs (mixed precision keeps an fp32 master).", "train"),
    "optimizer": ("Optimizer", [(o, o) for o in OPTIMIZER_STATE_BYTES],
                  "AdamW: 12 B/param of fp32 state (ZeRO's K = 12); SGD momentum; 8-bit Adam.", "train"),
    "weight_dtype": ("Weight format", [(d, d) for d in WEIGHT_FORMATS], "Format of the weights read each decode step.",
                     "infer"),
    "kv_dtype": ("KV-cache format", [(d, d) for d in KV_DTYPES], "Format of the cached keys and values.", "infer"),
    "kv_policy": ("KV policy", [(p, p) for p in KV_POLICIES],
                  "Which cached tokens are kept: all, a sliding window, StreamingLLM sinks + window, H2O heavy "
                  "hitters, RazorAttention retrieval heads.", "infer"),
    "offload": ("Offload", [("none", "none"), ("optimizer", "optimizer to host (ZeRO-Offload)"),
                            ("activations", "activations to host (vDNN)"), ("nvme", "optimizer to NVMe (ZeRO-Infinity)")],
                "Move state off the GPU over the host link (and NVMe).", "train"),
    "kv_offload_tier": ("KV offload target", [("host", "host DRAM (host link)"), ("cxl", "CXL memory pool")],
                        "Where the offloaded share of the KV cache lives (FlexGen to host; Pond-style CXL pool).",
                        "infer"),
    "grad_comm_bytes": ("Gradient wire format", [(0.0, "as the gradients"), (1.0, "8-bit (quantised)"),
                                                 (0.5, "4-bit (quantised)")],
                        "Bytes per gradient element on the network (QSGD-style quantised communication).", "train"),
    "moe_node_limit": ("MoE routing", [(0, "to any node"), (4, "to at most 4 nodes"), (2, "to at most 2 nodes")],
                       "Node-limited routing (DeepSeek-V3 §2.1.2: M = 4): each token crosses the scale-out network once "
                       "per target node and is forwarded over NVLink.", "train"),
    # speculative decoding (#23): a draft model preset, or the target's own MTP modules (DeepSeek-V3 §2.2)
    "draft_model": ("Draft model", [("", "none")] + [(k, m.name) for k, m in model_presets().items()],
                    "Speculative decoding (Leviathan et al. 2023): a small model with the target's vocabulary proposes "
                    "tokens, the target verifies them in one step. Decode only; none = off.", "infer"),
    "mtp_depth": ("MTP modules", [(0, "none"), (1, "1 (DeepSeek-V3)"), (2, "2"), (3, "3")],
                  "Multi-token prediction as the draft: each module, one layer of the target sharing its embedding and "
                  "head, proposes one token (DeepSeek-V3 §5.4.3). Use with draft model none.", "infer"),
    # LoRA / QLoRA fine-tuning (#23, model/formulas/lora.py)
    "lora_rank": ("LoRA rank", [(0, "off: train every weight"), (4, "4"), (8, "8"), (16, "16"), (32, "32"),
                                (64, "64")],
                  "LoRA (Hu et al. 2021): freeze the model and train rank-r adapters W + BA; the frozen base has no "
                  "gradients or optimizer states and skips its weight-gradient pass.", "train"),
    "lora_targets": ("LoRA targets", [("qv", "Wq, Wv"), ("qkvo", "all attention projections"),
                                      ("all", "every linear layer")],
                     "The matrices that get adapters: Wq and Wv (the LoRA paper), all four attention projections, or "
                     "every linear layer of the blocks (QLoRA).", "train"),
    # disaggregated prefill and decode (#23)
    "kv_transfer_link": ("KV transfer link", [("auto", "auto"), ("scale-up", "scale-up (NVLink)"),
                                              ("scale-out", "scale-out (NIC)")],
                         "The link each request's KV cache crosses from the prefill to the decode pool: NVLink when a "
                         "prefill and a decode instance share a node (DistServe §4.2), else one NIC per GPU.", "infer"),
}
# Fractions and ratios: (label, minimum, maximum, step, decimals, tooltip, group)
_DOUBLES = {
    "grad_compression": ("DGC compression ratio", 10.0, 0,
                         "Deep gradient compression (Lin et al. 2018): top-k sparsification ratio; 1 = off, "
                         "270-600 in the paper.", "train"),
    "kv_offload_fraction": ("KV kept in host DRAM", 0.05, 2,
                            "Share of the KV cache offloaded to host memory and fetched over the host link "
                            "each decode step (FlexGen).", "infer"),
    "prefix_hit_fraction": ("Prefix-cache hit", 0.05, 2,
                            "Share of the prompt whose KV is already cached (prefix caching): skipped in prefill.",
                            "infer"),
    # speculative decoding (#23)
    "acceptance": ("Acceptance rate (α)", 0.05, 2,
                   "Probability that the target accepts a proposed token: tokens per target step = "
                   "(1 − α^(γ+1)) / (1 − α). DeepSeek-V3 reports 0.85–0.9 for its MTP's second token.", "infer"),
    # load and latency targets (#23): 0 = off (one static batch) / no target
    "request_rate": ("Requests per second", 0.5, 2,
                     "Poisson arrivals on this replica with continuous batching and chunked prefill: p50/p95 TTFT and "
                     "TPOT in System outcomes (0 = off: one static batch).", "infer"),
    "ttft_slo_s": ("TTFT target p95 (s)", 0.05, 3,
                   "Time-to-first-token target for the highest rate within the targets (0 = none).", "infer"),
    "tpot_slo_s": ("TPOT target p95 (s)", 0.005, 3,
                   "Time-per-output-token target for the highest rate within the targets (0 = none).", "infer"),
    # cost and power (#23, model/views/cost.py)
    "gpu_hour_price": ("GPU price ($/GPU-hour)", 0.25, 2,
                       "Your price of one GPU-hour in dollars (0 = none): the System outcomes and planner read-outs "
                       "turn it into dollars per million tokens. No price is shipped with the app.", "cluster"),
}
_CHECKS = {
    "sequence_parallel": ("Sequence parallelism", "Shards layer-norm and dropout activations across TP ranks "
                          "(Korthikanti et al. 2022).", "train"),
    "flash_attention": ("FlashAttention", "Never stores the s x s attention scores (Dao et al. 2022); "
                        "recomputes them in the backward pass.", "train"),
    "in_network_aggregation": ("In-network aggregation", "The switch sums the data-parallel all-reduce (bus factor "
                               "(n-1)/(n+1), nccl-tests); applies to ZeRO-0 over the scale-out network.", "train"),
    "tp_comm_overlap": ("TP comm overlap", "Pipelines the TP all-gather / reduce-scatter with the GEMMs (Transformer "
                        "Engine tp_comm_overlap, NeMo docs); needs sequence parallelism. Off by default.", "train"),
    "ep_comm_overlap": ("EP comm overlap (DualPipe)", "Hides the MoE all-to-all and PP sends behind a paired forward "
                        "and backward chunk (DeepSeek-V3 §3.2.1); 20 of 132 SMs drive it. Off by default.", "train"),
    "moe_fp8_dispatch": ("MoE FP8 dispatch", "Sends tokens to the experts in FP8 and combines in BF16 (DeepSeek-V3 "
                         "§3.3.4). Off by default.", "train"),
    "mtp_training": ("Train MTP modules", "Trains the model's multi-token-prediction modules with it (DeepSeek-V3 "
                     "§2.2: one block and one more output-head pass each, on the last stage). Does nothing for a model "
                     "without them.", "train"),
    # LoRA / QLoRA fine-tuning (#23)
    "qlora": ("QLoRA (NF4 base)", "Stores the frozen base's linear weights in NF4 with double quantisation, 4.127 "
              "bits each (Dettmers et al. 2023); needs a LoRA rank. Off by default.", "train"),
    # disaggregated prefill and decode (#23)
    "kv_transfer_layerwise": ("Layer-wise KV transfer", "Streams each layer's KV to the decode pool as soon as it is "
                              "computed, behind the rest of the prefill (Mooncake §5.2). Off by default.", "infer"),
}


class ScenarioControls(QtWidgets.QWidget):
    edited = QtCore.Signal(dict)

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self._updating = False
        self._choices: dict[str, dict] = {"hardware": {}, "model": {}}   # combo data -> Hardware / Architecture
        self._shown: Scenario | None = None
        self._layouts: dict[str, dict] = {}  # "train" / "infer" -> the GPUs and PP last used for that workload
        self._efficiency_index = 0
        self.widgets: dict[str, QtWidgets.QWidget] = {}
        outer = QtWidgets.QVBoxLayout(self)
        outer.setContentsMargins(6, 6, 6, 6)

        self.error_label = QtWidgets.QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {theme.BAD_COLOR}; font-weight: bold;")
        self.error_label.setAccessibleName("Scenario error")
        self.error_label.hide()

        self.hardware_combo = self._combo("hardware", "Hardware", "Accelerator preset (or a loaded hardware file).")
        self.model_combo = self._combo("model", "Model", "Model architecture preset (or a loaded model file).")
        self.kind_combo = self._combo("kind", "Workload", "Training step, or an inference request's prefill or decode.")
        for key, label in KINDS:
            self.kind_combo.addItem(label, key)
        fit_to_items(self.kind_combo)

        groups = {"setup": QtWidgets.QGroupBox("Scenario"), "cluster": QtWidgets.QGroupBox("Cluster"),
                  "train": QtWidgets.QGroupBox("Training"), "infer": QtWidgets.QGroupBox("Inference")}
        forms = {name: QtWidgets.QFormLayout(box) for name, box in groups.items()}
        for form in forms.values():
            form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            # a field too wide beside its label goes under it: no value is ever cut to fit the column
            form.setRowWrapPolicy(QtWidgets.QFormLayout.RowWrapPolicy.WrapLongRows)
        self.serving = ServingSection()  # collapsible serving fields inside the Inference group (#23)
        forms["serve"] = self.serving  # keeps the rows, then lays them out in its own order (`place`)
        forms["setup"].addRow("Hardware", self.hardware_combo)
        forms["setup"].addRow("Model", self.model_combo)
        forms["setup"].addRow("Workload", self.kind_combo)
        forms["setup"].addRow("Efficiency set", self._efficiency_combo())
        for field, (label, tip, group) in _SPINS.items():
            lo, hi = 0 if LIMITS[field].zero_ok else LIMITS[field].lowest, LIMITS[field].highest
            spin = self._spin(QtWidgets.QSpinBox(), field, label, lo, hi, tip, int)
            spin.setSpecialValueText(_SPIN_ZERO_TEXT.get(field, ""))
            spin.setAccelerated(True)
            forms[_form_of(field, group)].addRow(label, spin)
        for field, (label, items, tip, group) in _COMBOS.items():
            combo = self._combo(field, label, tip)
            for value, text in items:
                add_named(combo, text, value)
            fit_to_items(combo)
            forms[_form_of(field, group)].addRow(label, combo)
        for field, (label, step, decimals, tip, group) in _DOUBLES.items():
            lo, hi = LIMITS[field].lowest, LIMITS[field].highest
            spin = QtWidgets.QDoubleSpinBox()
            spin.setDecimals(decimals)
            spin.setSingleStep(step)
            forms[_form_of(field, group)].addRow(label, self._spin(spin, field, label, lo, hi, tip, float))
        for field, (label, tip, group) in _CHECKS.items():
            check = QtWidgets.QCheckBox(label)
            check.setToolTip(tip)
            check.setAccessibleName(label)
            check.toggled.connect(lambda on, f=field: self._emit({f: bool(on)}))
            self.widgets[field] = check
            forms[_form_of(field, group)].addRow(check)   # the whole row: the box's text is never squeezed into the field column
        self.serving.place(self.widgets)
        forms["infer"].addRow(self.serving)  # last in the Inference group (#23)
        self.groups = groups

        # no scroll area of its own: the dock scrolls the form (one scroll bar, not two)
        outer.addWidget(self.error_label)
        for box in groups.values():
            outer.addWidget(box)
        outer.addStretch(1)

    def _spin(self, spin, field: str, label: str, lo, hi, tip: str, kind):
        """A spin box that reports its value as an edit of `field` once typing is finished."""
        spin.setRange(lo, hi)
        spin.setKeyboardTracking(False)
        spin.setToolTip(tip)
        spin.setAccessibleName(label)
        spin.valueChanged.connect(lambda value, f=field: self._emit({f: kind(value)}))
        self.widgets[field] = spin
        return spin

    def _combo(self, field: str, label: str, tip: str) -> QtWidgets.QComboBox:
        combo = QtWidgets.QComboBox()
        # long entries (preset names, technique modes) must not widen the column: the list shows them in full
        combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setItemDelegate(named_combo.FullNameDelegate(combo))
        combo.setToolTip(tip)
        combo.setAccessibleName(label)
        combo.currentIndexChanged.connect(lambda _i, f=field, c=combo: self._emit({f: c.currentData()}))
        self.widgets[field] = combo
        return combo

    def _efficiency_combo(self) -> QtWidgets.QComboBox:
        """The named efficiency sets (model/inputs/assumptions.py): default, or calibrated by `validate --fit`."""
        combo = QtWidgets.QComboBox()
        combo.setToolTip("Compute, HBM and network efficiency: the default assumptions (stated with their "
                         "sources) or the set fitted to published runs by trinity-desktop validate --fit")
        combo.setAccessibleName("Efficiency set")
        for name in SETS:
            combo.addItem(name, name)
        combo.currentIndexChanged.connect(lambda _i: self._choose_efficiency(combo.currentData()))
        self.efficiency_combo = combo
        return combo

    def _choose_efficiency(self, name: str | None) -> None:
        if self._updating or name is None:
            return
        try:
            self._emit({"efficiency": efficiency_of(name)})
        except ValidationError as exc:  # no calibrated set yet: say so, keep the scenario
            self.show_error(str(exc))
            self._updating = True
            self.efficiency_combo.setCurrentIndex(self._efficiency_index)
            self._updating = False

    def _show_efficiency(self, sc: Scenario) -> None:
        """Select the set whose likely values the scenario uses (none selected for other values)."""
        index = -1
        for i in range(self.efficiency_combo.count()):
            try:
                if efficiency_of(self.efficiency_combo.itemData(i)) == sc.efficiency:
                    index = i
                    break
            except ValidationError:
                continue
        self._efficiency_index = index
        self.efficiency_combo.setCurrentIndex(index)

    def _emit(self, change: dict) -> None:
        if not self._updating:
            hw = self._choices["hardware"].get(change.get("hardware"))
            if hw is not None:  # a new device brings its own node size (4 TPU v5p chips, 8 GPUs in a DGX)
                change = {**change, "gpus_per_node": hw.gpus_per_node_default}
            if "kind" in change:
                change = {**change, **self._layout_for(change["kind"])}
            change = with_companion_pool(change, self._shown)  # disaggregated serving (#23)
            self.edited.emit(change)

    def _layout_for(self, kind: str) -> dict:
        """The GPU count and PP a workload switch brings along: the ones last used for that kind of workload
        (training, or inference), else, going from training to inference, one tensor-parallel group of the
        training layout (its TP degree and PP 1, as residency.serving_scenario serves a training layout): never a
        64-way TP decode."""
        sc = self._shown
        if sc is None or _group(kind) == _group(sc.kind):
            return {}
        if _group(kind) in self._layouts:
            return dict(self._layouts[_group(kind)])
        return {"gpus": sc.tp, "pp": 1} if sc.kind == "train" else {}

    # --- shown state ----------------------------------------------------------------------------
    def set_choices(self, hardware: Mapping[str, Hardware], models: Mapping[str, Architecture]) -> None:
        self._updating = True
        try:
            for field, items in (("hardware", hardware), ("model", models)):
                combo = self.widgets[field]
                current = combo.currentData()
                combo.clear()
                self._choices[field] = dict(items)
                for key, item in items.items():
                    add_named(combo, item.name, key)
                fit_to_items(combo)
                index = combo.findData(current)
                combo.setCurrentIndex(max(index, 0))
        finally:
            self._updating = False

    def choice(self, field: str, data: str) -> Hardware | Architecture:
        """The hardware or model a "hardware" / "model" edit names (its combo data): a preset, a loaded file's,
        or a session's own (`show_scenario` adds those)."""
        return self._choices[field][data]

    def _select_item(self, field: str, item: Hardware | Architecture) -> None:
        """Select `item` in its combo; a session's own hardware or model (not a preset, or a preset edited)
        joins the choices under its own name, so the box never shows another item's name."""
        combo, choices = self.widgets[field], self._choices[field]
        data = item.key if choices.get(item.key) == item else next(
            (d for d, known in choices.items() if known == item), f"session:{item.key}")
        if data not in choices:
            choices[data] = item
            add_named(combo, item.name, data)
            fit_to_items(combo)
        combo.setCurrentIndex(combo.findData(data))

    def show_scenario(self, sc: Scenario) -> None:
        """Show `sc` in every control without emitting edits."""
        self._shown = sc
        self._layouts[_group(sc.kind)] = {"gpus": sc.gpus, "pp": sc.pp}
        self._updating = True
        try:
            self._select_item("hardware", sc.hardware)
            self._select_item("model", sc.model)
            for field, widget in self.widgets.items():
                if field in ("hardware", "model"):
                    continue
                value = getattr(sc, field)
                if isinstance(widget, (QtWidgets.QSpinBox, QtWidgets.QDoubleSpinBox)):
                    if widget.value() != value:  # an unchanged spin box is not repainted
                        widget.setValue(value)
                elif isinstance(widget, QtWidgets.QCheckBox):
                    widget.setChecked(value)
                elif isinstance(widget, QtWidgets.QComboBox):
                    widget.setCurrentIndex(max(widget.findData(value), 0))
            if sc.prompt_len + sc.gen_len <= CONTEXT_MAX:  # prompt + generated tokens: what the KV views accept
                self.widgets["prompt_len"].setMaximum(max(1, CONTEXT_MAX - sc.gen_len))
                self.widgets["gen_len"].setMaximum(max(1, CONTEXT_MAX - sc.prompt_len))
            self._show_efficiency(sc)
            training = sc.kind == "train"
            self.groups["train"].setVisible(training)
            self.groups["infer"].setVisible(not training)
            # speculative decoding (#23): γ is the draft model's (MTP proposes one per module); α needs a drafter
            self.widgets["draft_tokens"].setEnabled(bool(sc.draft_model))
            self.widgets["acceptance"].setEnabled(bool(sc.draft_model) or sc.mtp_depth > 0)
            self.serving.show_scenario(sc)  # the Serving section opens when the scenario sets a serving field
        finally:
            self._updating = False

    def show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.show()

    def clear_error(self) -> None:
        self.error_label.clear()
        self.error_label.hide()


def add_named(combo: QtWidgets.QComboBox, name: str, data) -> None:
    """An item shown by its short name ("AMD Instinct MI300X"), the full one ("... (OAM)") in the list and
    the hover (plot_widgets.FullNameDelegate)."""
    combo.addItem(named_combo.short_name(name), data)
    combo.setItemData(combo.count() - 1, name, named_combo.FULL_NAME_ROLE)
    combo.setItemData(combo.count() - 1, name, QtCore.Qt.ItemDataRole.ToolTipRole)


# disaggregated serving (#23)
def with_companion_pool(change: dict, shown: Scenario | None) -> dict:
    """Pools come in pairs: setting one pool's GPUs while the other is off gives the other as many; turning one
    off turns both off (aggregated serving), so one edit never leaves a half-set layout the scenario refuses."""
    pair = {"prefill_gpus": "decode_gpus", "decode_gpus": "prefill_gpus"}
    field = next((f for f in pair if f in change), None)
    if field is None or shown is None or pair[field] in change:
        return change
    value, other = change[field], getattr(shown, pair[field])
    if value == 0 or other == 0:
        return {**change, pair[field]: value}
    return change


def fit_to_items(combo: QtWidgets.QComboBox) -> None:
    """The box at least as wide as its longest shown item, so the value shown is whole (a row too wide for the
    form's column wraps under its label instead); the list as wide as the longest full name."""
    metrics = QtGui.QFontMetrics(combo.font())
    texts = [combo.itemText(i) for i in range(combo.count())]
    combo.setMinimumContentsLength(max([10] + [len(t) + 1 for t in texts]))
    fulls = [combo.itemData(i, named_combo.FULL_NAME_ROLE) or combo.itemText(i) for i in range(combo.count())]
    combo.view().setMinimumWidth(max([0] + [metrics.horizontalAdvance(t) for t in fulls]) + 40)


def _group(kind: str) -> str:
    """Training has its own layout; prefill and decode share the inference one (TP x PP over all GPUs)."""
    return "train" if kind == "train" else "infer"


# the collapsible Serving section (#23, ui/serving_section.py): its fields are placed there, not in their group
def _form_of(field: str, group: str) -> str:
    """The form a field's row goes in: "serve" for the serving fields, else its table group."""
    return "serve" if field in SERVING_FIELDS else group
