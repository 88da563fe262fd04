"""Display text of the model's ids: time parts (`Results.time` keys of a training step) and the legend roles of
the step-through flow's bars. The model names stages, parts and points by id (model/views/stages.ROLES,
roofline.POINT_ROLES); the words a reader sees live here, in one place."""

from __future__ import annotations

# Time parts of a training step (model/step/training.TrainTime), as the breakdown and outcomes bars name them.
TIME_PART_TEXT = {"compute": "Compute", "communication_exposed": "Exposed communication",
                  "pipeline_bubble": "Pipeline bubble", "optimizer": "Optimizer step",
                  "gradient_compression": "DGC top-k selection", "offload_transfer": "Offload transfer (exposed)"}

# Time parts of a prefill or decode step (`Results.time` role ids, model/step/evaluation.PREFILL_TIME_IDS /
# DECODE_TIME_IDS), as the breakdown and outcomes bars name them.
INFER_TIME_PART_TEXT = {"gemms": "GEMMs (weights)", "attention": "attention", "attention_kv_reads": "attention (KV reads)",
                        "tp_comm": "TP communication", "pp_comm": "PP communication",
                        "kv_offload": "KV offload (host link)", "kv_fetch": "KV fetch (host link)",
                        "fixed": "kernel launch and sync", "ep_comm": "EP all-to-all"}

# Legend roles of the flow's bars (ui/flow_readout.role_of) -> legend text.
LEGEND_TEXT = {
    "forward": "forward", "backward": "backward", "recompute": "recompute", "communication": "communication",
    "memory-transfer": "offload / host transfer", "optimizer": "optimizer / DGC", "io": "data load",
    "idle": "idle (bubble)", "compute-bound": "compute-bound", "bandwidth-bound": "bandwidth-bound",
    "memory-bound": "does not fit (memory)",
    "draft": "draft model steps",  # speculative decoding (#23)
}

# The legend role of each compute stage role of a training step (model/views/stages.ROLES); other compute
# stages (forward, the grouped steady block) are "forward".
LEGEND_ROLE_OF_STAGE = {"backward": "backward", "recompute_attention": "recompute", "recompute_layer": "recompute",
                        "optimizer": "optimizer", "optimizer_host": "optimizer"}
