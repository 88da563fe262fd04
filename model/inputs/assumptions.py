"""The modelling assumptions as low/likely/high ranges (resources/assumptions.toml), and named sets of them.

Two sets exist: "default" (the resources file; its `likely` values are what every point estimate uses) and
"calibrated", written by `trinity-desktop validate --fit` (model/search/validation.py) to a user file: the three
efficiencies fitted to published training runs, the other assumptions as in the default set.
The three efficiencies are named `compute_efficiency`, `hbm_efficiency` and `network_efficiency` everywhere
outside the `Efficiency` dataclass (CLI JSON, session controls, validation output).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path

from trinity_desktop.model.base.errors import ValidationError, shown, shown_key
from trinity_desktop.model.base.files import FileNotWritten, write_atomically
from trinity_desktop.model.base.ranges import EFFICIENCY_LIMITS, QUANTITY_RULE, check
from trinity_desktop.model.inputs.presets import read_toml
from trinity_desktop.model.inputs.scenario import Efficiency

EFFICIENCY_NAMES = ("compute_efficiency", "hbm_efficiency", "network_efficiency")
EFFICIENCY_FIELD = {"compute_efficiency": "compute", "hbm_efficiency": "hbm", "network_efficiency": "network"}
SETS = ("default", "calibrated")
CALIBRATED_FILE = "calibrated_assumptions.toml"


@dataclass(frozen=True)
class Assumption:
    """One assumption's range. `kind` "fraction": the value itself; "scale": a factor on a preset's value."""

    name: str
    label: str
    kind: str
    applies_to: tuple[str, ...]
    low: float
    likely: float
    high: float
    source: str
    note: str

    def __post_init__(self):
        if not (0.0 <= self.low <= self.likely <= self.high) or self.high <= self.low:
            raise ValidationError(f"assumptions.{self.name}", (self.low, self.likely, self.high),
                                  "0 <= low <= likely <= high with low < high")
        if self.kind == "fraction" and self.high > 1.0:
            raise ValidationError(f"assumptions.{self.name}.high", self.high, "a fraction at most 1")


def _parse(doc: Mapping, where: str) -> dict[str, Assumption]:
    """Assumptions from a parsed TOML document; anything malformed is one ValidationError naming the entry."""
    entries = doc.get("assumption", [])
    if not isinstance(entries, list) or not all(isinstance(e, Mapping) for e in entries):
        raise ValidationError(f"{where}: assumption", shown(entries), "an array of tables [[assumption]]")
    out = {}
    for i, entry in enumerate(entries):
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise ValidationError(f"{where}: assumption #{i + 1}.name", name, "a name (text)")
        label = f"{where}: {shown_key(name)}"
        text = {key: entry.get(key, default) for key, default in
                (("label", name), ("kind", "fraction"), ("source", ""), ("note", ""))}
        for key, value in text.items():
            if not isinstance(value, str):
                raise ValidationError(f"{label}.{key}", value, "text")
        applies_to = entry.get("applies_to", [])
        if not isinstance(applies_to, list) or not all(isinstance(x, str) for x in applies_to):
            raise ValidationError(f"{label}.applies_to", applies_to, "a list of names")
        bounds = {}
        for key in ("low", "likely", "high"):
            if key not in entry:
                raise ValidationError(f"{label}.{key}", None, "a number (required)")
            check(f"{label}.", key, entry[key], QUANTITY_RULE, whole=False)  # the one guard, before float()
            bounds[key] = float(entry[key])
        a = Assumption(name=name, label=text["label"], kind=text["kind"], applies_to=tuple(applies_to),
                       source=text["source"], note=text["note"].strip(), **bounds)
        out[a.name] = a
    return out


@cache
def default_assumptions() -> dict[str, Assumption]:
    text = resources.files("trinity_desktop.resources").joinpath("assumptions.toml").read_text(encoding="utf-8")
    return _parse(tomllib.loads(text), "assumptions.toml")


def data_directory() -> Path:
    """Where user-written sets live: $TRINITY_DESKTOP_HOME, else ~/.trinity-desktop."""
    return Path(os.environ.get("TRINITY_DESKTOP_HOME") or Path.home() / ".trinity-desktop")


def calibrated_path() -> Path:
    return data_directory() / CALIBRATED_FILE


def available_sets() -> tuple[str, ...]:
    """"default", plus "calibrated" once `validate --fit` has written it."""
    return SETS if calibrated_path().is_file() else SETS[:1]


def assumptions(set_name: str = "default") -> dict[str, Assumption]:
    """The ranges of a named set: the default file, with the calibrated efficiencies swapped in."""
    if set_name not in SETS:
        raise ValidationError("efficiency", set_name, "one of " + ", ".join(SETS))
    base = default_assumptions()
    if set_name == "default":
        return dict(base)
    path = calibrated_path()
    if not path.is_file():
        raise ValidationError("efficiency", "calibrated",
                              "default (no calibrated set yet: run `trinity-desktop validate --fit` first)")
    fitted = _parse(read_toml(path), path.name)  # the size cap and checks of every user file (presets.read_toml)
    for k, v in fitted.items():
        if k in EFFICIENCY_FIELD:  # an efficiency's range must be one Efficiency takes: refused here by name
            limit = EFFICIENCY_LIMITS[EFFICIENCY_FIELD[k]]
            for bound in ("low", "likely", "high"):
                check(f"{path.name}: {k}.", bound, getattr(v, bound), limit.rule, whole=False, allowed=limit.describe())
    return {**base, **{k: replace(base[k], low=v.low, likely=v.likely, high=v.high, source=v.source, note=v.note)
                       for k, v in fitted.items() if k in base}}


def efficiency_of(set_name: str = "default") -> Efficiency:
    """The point-estimate `Efficiency` of a set: its likely values."""
    a = assumptions(set_name)
    return Efficiency(**{EFFICIENCY_FIELD[n]: a[n].likely for n in EFFICIENCY_NAMES})


def efficiency_json(eff: Efficiency) -> dict[str, float]:
    """The three efficiencies under their output names."""
    return {n: float(getattr(eff, EFFICIENCY_FIELD[n])) for n in EFFICIENCY_NAMES}


def write_calibrated(ranges: Mapping[str, tuple[float, float, float]], note: str, path: Path | None = None) -> Path:
    """Write the calibrated efficiency ranges {name: (low, likely, high)} as a TOML set; returns the path."""
    path = Path(path) if path is not None else calibrated_path()
    lines = ["# Written by `trinity-desktop validate --fit` (model/search/validation.py). Efficiencies fitted to the",
             "# published runs of resources/published_runs.toml; use with `--efficiency calibrated`.", ""]
    for name, (low, likely, high) in ranges.items():
        Assumption(name, name, "fraction", (), low, likely, high, "", "")  # validates the range
        lines += ["[[assumption]]", f'name = "{name}"', f"low = {low:.6g}", f"likely = {likely:.6g}",
                  f"high = {high:.6g}", 'source = "published-runs-fit"',
                  'note = "' + note.replace("\\", "/").replace('"', "'") + '"', ""]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FileNotWritten(f"cannot be written (its folder cannot be made: {exc.strerror or exc})") from None
    return write_atomically(path, "\n".join(lines).encode("utf-8"))  # a failed write keeps the previous set
