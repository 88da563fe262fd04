"""Command-line pieces for honest numbers: `--efficiency SET` and `--uncertainty` on `calc train|infer`, and the
`validate` subcommand (model/search/validation.py). cli.py keeps only the hooks.

  calc train|infer --efficiency {default,calibrated}
                   the efficiency set: the likely values of resources/assumptions.toml, or the set
                   `validate --fit` wrote. The JSON always names the efficiencies used under `efficiency`
                   {compute_efficiency, hbm_efficiency, network_efficiency, set}.
  calc train|infer --uncertainty [--samples N]
                   adds `uncertainty` {samples, evaluations, set, headline, time_per_step_s (train) or
                   time_per_output_token_s and ttft_s (infer), mfu, tokens_per_s: {p05, p50, p95},
                   sensitivity: {assumption: {first, total}}} (model/search/uncertainty.py).
  validate [--json] [--fit] [--efficiency SET] [--samples N]
                   predicted against measured time for every run of resources/published_runs.toml (training:
                   step time; inference: request, first-token or per-token time), with the p05-p95 band; the
                   JSON has, with the set's assumptions first, runs [{name, kind, quantity, source, family,
                   moe, measured, predicted, p05, p95, rel_error, ...}], median_abs_rel_error (and _by_kind,
                   _by_family), worst_abs_rel_error, moe_runs, memory_runs (peak memory per GPU, bytes) and
                   memory_median_abs_rel_error; then the calibration held out:
                   leave_one_out_, leave_one_family_out_ and leave_one_source_out_median_abs_rel_error
                   (efficiencies refitted without each run, hardware family or source; the better of the two
                   fits under `fits`: compute+network with HBM kept, compute+network+hbm, each with its
                   errors _by_kind, _by_family, _by_source). --fit also writes the calibrated set
                   (`--efficiency calibrated`) and adds `fit`.
"""

from __future__ import annotations

import argparse

from trinity_desktop.model import Scenario
from trinity_desktop.model.base.errors import shown
from trinity_desktop.model.inputs.assumptions import SETS, efficiency_json, efficiency_of
from trinity_desktop.model.search.uncertainty import DEFAULT_SAMPLES, propagate, uncertainty_json


def _power_of_two(text: str, most: int = 1 << 16) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a whole number") from None
    if value < 16 or value > most or value & (value - 1):
        raise argparse.ArgumentTypeError(f"{shown(value)} must be a power of two from 16 to {most}")
    return value


VALIDATE_MAX_SAMPLES = 1 << 10  # per run, for every published run: 65,536 ran for many minutes (256 takes ~3 s)


def _validate_samples(text: str) -> int:
    return _power_of_two(text, VALIDATE_MAX_SAMPLES)


def add_calc_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--efficiency", choices=SETS, default="default",
                   help="efficiency set: default (resources/assumptions.toml) or calibrated (written by "
                        "`validate --fit`)")
    p.add_argument("--uncertainty", action="store_true",
                   help="add p05/p50/p95 bands and Sobol sensitivity indices of the assumptions (JSON key "
                        "`uncertainty`)")
    p.add_argument("--samples", type=_power_of_two, default=DEFAULT_SAMPLES,
                   help=f"Sobol samples for --uncertainty (power of two, default {DEFAULT_SAMPLES})")


def add_validate_parser(sub) -> None:
    v = sub.add_parser("validate", help="predicted against measured published training and inference runs")
    v.add_argument("--json", action="store_true", help="print machine-readable JSON")
    v.add_argument("--fit", action="store_true",
                   help="fit the efficiencies to the runs (scipy least_squares), report in-sample and "
                        "leave-one-out error, and write the calibrated set (--efficiency calibrated)")
    v.add_argument("--efficiency", choices=SETS, default="default",
                   help="efficiency set the runs are predicted with (calibrated: the set `--fit` wrote)")
    v.add_argument("--samples", type=_validate_samples, default=256,
                   help=f"Sobol samples per run for the p05-p95 bands (power of two, default 256, at most "
                        f"{VALIDATE_MAX_SAMPLES})")


def with_efficiency(sc: Scenario, args) -> Scenario:
    """The scenario with the chosen set's efficiencies (a missing calibrated set is a ValidationError)."""
    if args.efficiency == "default":
        return sc
    return sc.replace(efficiency=efficiency_of(args.efficiency))


def extend_report(rep: dict, sc: Scenario, args) -> dict:
    """Name the efficiencies used; add the uncertainty bands when asked."""
    rep["efficiency"] = {**efficiency_json(sc.efficiency), "set": args.efficiency}
    if args.uncertainty:
        u = propagate(sc, samples=args.samples, set_name=args.efficiency)
        rep["uncertainty"] = uncertainty_json(u)
    return rep


def _fmt(name: str, x: float) -> str:
    if name in ("time_per_step_s", "time_per_output_token_s", "ttft_s"):
        return f"{x * 1e3:,.2f} ms" if x < 1 else f"{x:,.3f} s"
    if name == "mfu":
        return f"{x * 100:.1f}%"
    return f"{x:,.0f}"


def uncertainty_text(rep: dict) -> list[str]:
    lines = ["  efficiency        " + ", ".join(f"{k} {v:g}" for k, v in rep["efficiency"].items() if k != "set")
             + f"  ({rep['efficiency']['set']} set)"]
    u = rep.get("uncertainty")
    if not u:
        return lines
    lines.append(f"  uncertainty       {u['samples']:,} Sobol samples ({u['evaluations']:,} evaluations in one call)")
    for name in ("time_per_step_s", "time_per_output_token_s", "ttft_s", "mfu", "tokens_per_s"):
        if name in u:
            b = u[name]
            lines.append(f"    {name:24s} p05 {_fmt(name, b['p05'])}  p50 {_fmt(name, b['p50'])}  "
                         f"p95 {_fmt(name, b['p95'])}")
    ranked = sorted(u["sensitivity"].items(), key=lambda kv: -kv[1]["total"])
    lines.append(f"  what matters most ({u['headline']}): " + ", ".join(
        f"{k} {v['total']:.2f}" for k, v in ranked if v["total"] >= 0.005))
    return lines


def wrap_text(text_fn):
    """The calc text output with the efficiency line and the bands appended."""
    return lambda rep: "\n".join([text_fn(rep), *uncertainty_text(rep)])


def validate_report(args) -> dict:
    from trinity_desktop.cli_options import CliError
    from trinity_desktop.model.base.files import FileNotWritten
    from trinity_desktop.model.search.validation import validate

    try:
        return validate(set_name=args.efficiency, samples=args.samples, fit=args.fit)
    except FileNotWritten as exc:  # the calibrated set is written atomically: the previous one stays
        raise CliError(f"--fit: the calibrated efficiency set {exc}") from None


QUANTITY_LABEL = {"step_time_s": "step", "request_s": "request", "ttft_s": "1st token",
                  "time_per_output_token_s": "per token"}


def _seconds(x: float) -> str:
    return f"{x * 1e3:7.1f}ms" if x < 1 else f"{x:8.2f}s"


def _by_kind(medians: dict) -> str:
    return ", ".join(f"{kind} {m * 100:.1f}%" for kind, m in medians.items())


def _gib(x: float) -> str:
    return f"{x / 2 ** 30:7.1f}G"


def _memory_lines(rep: dict) -> list[str]:
    rows = rep["memory_runs"]
    if not rows:
        return []
    lines = [f"  peak memory per GPU (GiB), {len(rows)} runs:"]
    lines += [f"  {r['name'][:64]:64s} {'memory':>9s} {_gib(r['measured']):>9s} {_gib(r['predicted']):>9s} "
              f"{'':>9s} {'':>9s} {r['rel_error'] * 100:+6.1f}%" for r in rows]
    lines.append(f"  median |error| of peak memory {rep['memory_median_abs_rel_error'] * 100:.1f}%")
    return lines


def validate_text(rep: dict) -> str:
    lines = [f"Published runs against the model ({rep['set']} efficiency set): measured and predicted time of each "
             f"run's quantity, p05-p95 over the assumption ranges ({rep['samples_per_run']} Sobol samples per run)",
             f"  {'run':64s} {'quantity':>9s} {'measured':>9s} {'predicted':>9s} {'p05':>9s} {'p95':>9s} "
             f"{'error':>7s}"]
    for r in rep["runs"]:
        lines.append(f"  {r['name'][:64]:64s} {QUANTITY_LABEL[r['quantity']]:>9s} {_seconds(r['measured'])} "
                     f"{_seconds(r['predicted'])} {_seconds(r['p05'])} {_seconds(r['p95'])} "
                     f"{r['rel_error'] * 100:+6.1f}%{'' if r['in_band'] else ' *'}")
    lines += [f"  with the {rep['set']} assumptions: median |error| {rep['median_abs_rel_error'] * 100:.1f}% over "
              f"{len(rep['runs'])} runs ({rep['moe_runs']} MoE; {_by_kind(rep['median_abs_rel_error_by_kind'])}), "
              f"worst {rep['worst_abs_rel_error'] * 100:.1f}% "
              f"({rep['worst_run']}); {rep['runs_in_band']} of {len(rep['runs'])} measured inside p05-p95 "
              "(* = outside)",
              f"  by hardware family: {_by_kind(rep['median_abs_rel_error_by_family'])}"]
    lines += _memory_lines(rep)
    lines.append("  calibration, judged on runs left out of the fit (never a factor per run):")
    for label, f in rep["fits"].items():
        eff = ", ".join(f"{n} {v:.3f}" for n, v in f["efficiencies"].items())
        lines.append(f"  fit {label:20s} {eff}: median |error| in sample "
                     f"{f['in_sample_median_abs_rel_error'] * 100:.1f}%, leave-one-out "
                     f"{f['leave_one_out_median_abs_rel_error'] * 100:.1f}% "
                     f"({_by_kind(f['leave_one_out_median_abs_rel_error_by_kind'])}), leave-one-family-out "
                     f"{f['leave_one_family_out_median_abs_rel_error'] * 100:.1f}%, leave-one-source-out "
                     f"{f['leave_one_source_out_median_abs_rel_error'] * 100:.1f}%"
                     + ("  <- calibrates" if label == rep["leave_one_out_fit"] else ""))
    if "fit" in rep:
        lines.append(f"  calibrated set ({rep['fit']['variant']}) written to {rep['fit']['written_to']} "
                     "(use --efficiency calibrated)")
    return "\n".join(lines)
