"""The layout rules of a parallel training or inference deployment: one home, vectorised.

Each rule is a boolean (True = satisfied) that broadcasts over arrays, so the same function refuses one
`Scenario` (model/inputs/scenario.py raises a ValidationError naming the rule's field) and masks a grid of
layouts (model/step/layout.py, the planners). Rules, in the order a scenario checks them:

Training (Megatron-LM 3D parallelism, Narayanan et al. 2021; ZeRO's DP, Rajbhandari et al. 2020):
  tp             TP divides the attention heads (Megatron-LM splits heads over the TP ranks)
  pp             PP <= layers (every stage holds at least one layer)
  cp             CP divides the sequence (each rank holds s / CP tokens)
  gpus           TP x PP x CP divides the GPUs (DP = gpus / (TP x PP x CP))
  ep             EP divides DP and the expert count (experts shard over the data-parallel ranks)
  global_batch   micro-batch x DP divides the global batch (m = global / (micro x DP) micro-batches)
  virtual_stages interleaved 1F1B (§2.2.2): v = 1, or PP >= 2, every one of the PP x v chunks holds at least a
                 layer (PP x v <= L + 2: the first and the last chunk may hold only the embedding or the output
                 head, Llama 3 §3.3.2's 126 layers in 128 slots; chunks need not hold equal counts) and m is a
                 multiple of PP
  first_stage_layers / last_stage_layers  uneven stages (Megatron-LM's --decoder-first-pipeline-num-layers /
                 --decoder-last-pipeline-num-layers; Llama 3 §3.3.2: one layer fewer on the first and the last
                 stage): 0 = the even split; set, they need PP >= 2 (both: PP >= 3, or PP = 2 with first + last = L),
                 and the stages in between share the other layers evenly, at least one each
Inference (pipeline-parallel serving, every stage holds L / PP layers; TP = gpus / PP inside a stage):
  pp             PP divides the layers
Links (both): more than one device needs a device-to-device link; more than a node needs the scale-out network.
"""

from __future__ import annotations

from typing import NamedTuple

from trinity_desktop.model.base import xp

TRAINING_RULE_FIELDS = ("tp", "pp", "cp", "gpus", "ep", "global_batch", "virtual_stages", "first_stage_layers")


class Rule(NamedTuple):
    """One layout rule: the scenario field a refusal names, and where it holds (a broadcast boolean)."""

    field: str
    ok: object


def data_parallel(gpus, tp, pp, cp):
    """DP = gpus / (TP x PP x CP) where TP x PP x CP divides the GPUs, else 1 (the layout is refused)."""
    mp = tp * pp * cp
    return xp.where(gpus % mp == 0, gpus // xp.where(mp > 0, mp, 1), 1)


def micro_batch_count(global_batch, micro_batch, dp):
    """m = global batch / (micro-batch x DP) where it divides, else 1 (the layout is refused)."""
    per_step = micro_batch * dp
    return global_batch // xp.where(global_batch % per_step == 0, per_step, 1)


def interleaving_ok(layers: int, pp, virtual_stages, micro_batches):
    """Interleaved 1F1B: v = 1, or PP >= 2 with PP x v <= L + 2 chunks (module docstring) and m a multiple of PP."""
    return (virtual_stages == 1) | ((pp >= 2) & (pp * virtual_stages <= layers + 2) & (micro_batches % pp == 0))


def uneven_stages_ok(layers: int, pp, first, last, virtual_stages=1):
    """Uneven first / last stages (0 = even): PP >= 2 when one is set; the stages in between (PP minus the set
    ones) get the rest, at least one layer each; with none in between the set counts are all L; each set stage
    holds at least its v chunks' layer each."""
    n_set = (first > 0) * 1 + (last > 0) * 1
    rest = layers - first - last
    between = pp - n_set
    fits = xp.where(between > 0, rest >= between, rest == 0)
    chunks_ok = ((first == 0) | (first >= virtual_stages)) & ((last == 0) | (last >= virtual_stages))
    return (n_set == 0) | ((pp >= 2) & (pp >= n_set) & fits & chunks_ok)


def model_parallel_rules(layers: int, heads: int, *, gpus, tp, pp, cp, seq_len) -> tuple[Rule, ...]:
    """The training rules that depend on TP, PP and CP alone (the first four of `training_rules`)."""
    return (Rule("tp", heads % tp == 0), Rule("pp", pp <= layers), Rule("cp", seq_len % cp == 0),
            Rule("gpus", gpus % (tp * pp * cp) == 0))


def training_rules(arch, *, gpus, tp, pp, cp, ep, micro_batch, global_batch, seq_len, virtual_stages=1,
                   first_stage_layers=0, last_stage_layers=0) -> tuple[Rule, ...]:
    """Every training layout rule (module docstring) for the model `arch` (an `Architecture`: its layers, heads
    and experts), in the order a scenario checks them."""
    layers, heads, experts = arch.layers, arch.heads, arch.experts
    dp = data_parallel(gpus, tp, pp, cp)
    m = micro_batch_count(global_batch, micro_batch, dp)
    return (*model_parallel_rules(layers, heads, gpus=gpus, tp=tp, pp=pp, cp=cp, seq_len=seq_len),
            Rule("ep", (dp % ep == 0) & (experts % ep == 0)),
            Rule("global_batch", global_batch % (micro_batch * dp) == 0),
            Rule("virtual_stages", interleaving_ok(layers, pp, virtual_stages, m)),
            Rule("first_stage_layers", uneven_stages_ok(layers, pp, first_stage_layers, last_stage_layers,
                                                        virtual_stages)))


def inference_rules(layers: int, *, pp) -> tuple[Rule, ...]:
    """The inference layout rule every grid checks: PP divides the layers."""
    return (Rule("pp", layers % pp == 0),)


def links_ok(scaleup_bw: float, scaleout_bw: float, gpus, gpus_per_node):
    """More than one device needs a link; more than a node's devices need the scale-out network."""
    return (((gpus <= 1) | (scaleup_bw > 0) | (scaleout_bw > 0))
            & ((gpus <= gpus_per_node) | (scaleout_bw > 0)))


def all_hold(rules: tuple[Rule, ...]):
    """True where every rule holds (broadcast)."""
    ok = True
    for rule in rules:
        ok = ok & rule.ok
    return ok
