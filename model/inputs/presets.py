"""Presets from resources/*.toml (hardware, models, workloads, references) and user TOML files.

Each preset value may be a plain number or an inline table {value, source, status, note}; the source is a
key into references.toml. A bad file raises `PresetError` naming the file, the entry, the key and the problem.
"""

from __future__ import annotations

import difflib
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from trinity_desktop.model.base.errors import ValidationError, shown, shown_key, unknown_key
from trinity_desktop.model.base.files import FileRefused, read_capped
from trinity_desktop.model.base.ranges import HARDWARE_RULES, QUANTITY_RULE, Rule, check
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.hf_config import ConfigFieldError, load_hf_config

RESOURCE_PACKAGE = "trinity_desktop.resources"
MAX_FILE_BYTES = 1_000_000

PEAK_KEYS = {"peak_fp32": "fp32", "peak_tf32": "tf32", "peak_bf16": "bf16", "peak_fp16": "fp16",
             "peak_fp8": "fp8", "peak_int8": "int8", "peak_fp4": "fp4"}
HW_NUMBERS = ("hbm_bytes", "hbm_bw", "sram_bytes", "sram_per_core_bytes", "l2_bytes", "scaleup_bw",
              "scaleup_latency_s", "host_link_bw", "host_dram_bytes", "scaleout_bw", "scaleout_latency_s",
              "nvme_bw", "tdp_w")
HW_REQUIRED = ("hbm_bytes", "hbm_bw")
HW_TEXT = ("key", "name", "vendor", "kind", "scaleup_name", "host_link_name", "scaleout_name")
MODEL_REQUIRED = ("name", "layers", "hidden", "heads", "vocab")


class PresetError(ValidationError):
    """A preset or user file that cannot be used; the message names the file, the entry and the key."""

    def __init__(self, where: str, key: str, problem: str):
        self.where, self.key, self.problem = where, key, problem
        ValueError.__init__(self, f"{where}: {key}: {problem}")
        self.field, self.value, self.allowed = key, None, problem

    def __str__(self) -> str:
        return f"{self.where}: {self.key}: {self.problem}"


@dataclass(frozen=True)
class Reference:
    key: str
    authors: str
    year: int
    title: str
    venue: str = ""
    arxiv: str = ""
    url: str = ""
    note: str = ""

    def citation(self) -> str:
        where = f"arXiv:{self.arxiv}" if self.arxiv else self.url
        return f"{self.authors} ({self.year}). {self.title}. {self.venue} {where}".replace("  ", " ").strip()


def read_toml(source: Path | str, text: str | None = None) -> dict:
    name = str(source)
    if text is None:
        try:
            text = read_capped(source, MAX_FILE_BYTES).decode("utf-8")
        except FileRefused as exc:
            raise PresetError(name, "file", str(exc)) from None
        except UnicodeDecodeError as exc:
            raise PresetError(name, "file", f"cannot be read as UTF-8 text (byte {exc.start})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PresetError(name, "TOML", str(exc)) from None
    except RecursionError:
        raise PresetError(name, "TOML", "nested too deeply") from None
    except ValueError:  # an integer of more than 4300 digits (int's string-conversion limit)
        raise PresetError(name, "TOML", f"a number has more than {sys.get_int_max_str_digits()} digits") from None


def _resource_text(filename: str) -> str:
    return resources.files(RESOURCE_PACKAGE).joinpath(filename).read_text(encoding="utf-8")


def _number(where: str, key: str, raw: Any, rule: Rule = QUANTITY_RULE) -> tuple[float, str, str, str]:
    """(value, source, status, note) from a plain number or an inline {value, source, status, note}, through the
    one guard (model/base/ranges.py) before any arithmetic: a 400-digit value is refused, never converted."""
    source = status = note = ""
    if isinstance(raw, Mapping):
        if "value" not in raw:
            raise PresetError(where, key, "an inline table needs a 'value'")
        source, status, note = str(raw.get("source", "")), str(raw.get("status", "")), str(raw.get("note", ""))
        raw = raw["value"]
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise PresetError(where, key, f"must be a number, got {shown(raw)}")
    if not raw >= 0 or raw == float("inf"):  # comparisons, not float(): exact for an int of any size
        raise PresetError(where, key, f"must be a finite number >= 0, got {shown(raw)}")
    try:
        if raw != 0:  # 0 is "absent" or refused by name below (a required value, a peak)
            check("", key, raw, rule, whole=False)
    except ValidationError as exc:
        raise PresetError(where, key, f"{shown(raw)} is not allowed: {exc.allowed}") from None
    return float(raw), source, status, note


def hardware_from_dict(entry: Mapping, where: str) -> Hardware:
    key = str(entry.get("key") or entry.get("name") or "")
    where = f"{where} [{shown_key(key) if key else 'unnamed'}]"
    known = set(PEAK_KEYS) | set(HW_NUMBERS) | set(HW_TEXT) | {"gpus_per_node_default"}
    for name in entry:
        if name not in known:
            raise PresetError(where, shown_key(name),
                              unknown_key("hardware key", name, known, "resources/hardware.toml"))
    if not key:
        raise PresetError(where, "key", "is required (a short identifier such as 'h100-sxm')")
    for name in HW_TEXT:  # str() would make `name = inf` the device "inf" (and a NaN-looking report)
        if name in entry and not isinstance(entry[name], str):
            raise PresetError(where, name, f"must be text (a quoted string), got {shown(entry[name])}")
    sources, status, notes, values, peaks = {}, {}, {}, {}, {}
    for name in (*PEAK_KEYS, *HW_NUMBERS):
        if name in entry:
            rule = HARDWARE_RULES["peak_flops"] if name in PEAK_KEYS else HARDWARE_RULES[name]
            value, src, st, note = _number(where, name, entry[name], rule)
            sources[name], status[name], notes[name] = src, st, note
            if name in PEAK_KEYS:
                if value <= 0:
                    raise PresetError(where, name, "a peak must be > 0 (omit the key when not published)")
                peaks[PEAK_KEYS[name]] = value
            else:
                values[name] = value
    for name in HW_REQUIRED:
        if values.get(name, 0) <= 0:
            raise PresetError(where, name, "is required and must be > 0")
    if not ({"bf16", "fp16"} & set(peaks)):
        raise PresetError(where, "peak_bf16", "is required (or peak_fp16): the dense 16-bit peak FLOP/s")
    gpn = entry.get("gpus_per_node_default", 1)
    if isinstance(gpn, bool) or not isinstance(gpn, int) or gpn < 1:
        raise PresetError(where, "gpus_per_node_default", f"must be a whole number >= 1, got {shown(gpn)}")
    text = {name: str(entry[name]) for name in HW_TEXT if name in entry}
    text["key"] = key  # a table with a name but no key is keyed by its name
    text.setdefault("name", key)
    text.setdefault("vendor", "")
    text.setdefault("kind", "user")
    try:
        return Hardware(**text, peak_flops=peaks, gpus_per_node_default=gpn, sources=sources, status=status,
                        notes=notes, **values)
    except ValidationError as exc:  # outside its physical range (model/base/ranges.py)
        name = exc.field.removeprefix(f"{key}.")
        name = {f"peak_flops.{dtype}": k for k, dtype in PEAK_KEYS.items()}.get(name, name)  # the file's own key
        raise PresetError(where, name, f"{shown(exc.value)} is not allowed: {exc.allowed}") from None


_ARCH_FIELDS = {f.name: f for f in fields(Architecture)}


def architecture_from_dict(entry: Mapping, where: str) -> Architecture:
    key = str(entry.get("key") or entry.get("name") or "")
    where = f"{where} [{shown_key(key) if key else 'unnamed'}]"
    for name in entry:
        if name not in _ARCH_FIELDS:
            raise PresetError(where, shown_key(name),
                              unknown_key("model key", name, _ARCH_FIELDS, "resources/models.toml"))
    for name in MODEL_REQUIRED:
        if name not in entry:
            raise PresetError(where, name, "is required")
    args = dict(entry)
    args.setdefault("key", key)
    for name in ("layers", "hidden", "heads", "vocab"):
        v = args[name]
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise PresetError(where, name, f"must be a whole number >= 1, got {shown(v)}")
    args.setdefault("kv_heads", args["heads"])
    if args["hidden"] % args["heads"] and "head_dim" not in args:
        raise PresetError(where, "head_dim", "is required when hidden is not a multiple of heads")
    args.setdefault("head_dim", args["hidden"] // args["heads"])
    args.setdefault("ffn_hidden", 4 * args["hidden"])
    if "attention" not in args:
        kv, h = args["kv_heads"], args["heads"]
        args["attention"] = "mha" if kv == h else ("mqa" if kv == 1 else "gqa")
    for name, value in args.items():
        expected = _ARCH_FIELDS[name].type
        if expected == "int" and (isinstance(value, bool) or not isinstance(value, int)):
            raise PresetError(where, name, f"must be a whole number, got {shown(value)}")
        if expected == "bool" and not isinstance(value, bool):
            raise PresetError(where, name, f"must be true or false, got {shown(value)}")
        if expected == "float" and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise PresetError(where, name, f"must be a number, got {shown(value)}")
        if expected == "str" and not isinstance(value, str):
            raise PresetError(where, name, f"must be text, got {shown(value)}")
    try:
        return Architecture(**args)
    except ValidationError as exc:
        raise PresetError(where, exc.field.split(".")[-1], f"{shown(exc.value)} is not allowed: {exc.allowed}") from None


def _entries(doc: dict, table: str, where: str) -> list[dict]:
    if table in doc:
        items = doc[table]
        if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
            raise PresetError(where, table, f"must be an array of tables [[{table}]]")
        return items
    return [doc]  # a user file may describe one item with top-level keys


def load_hardware_file(path: Path | str, text: str | None = None) -> list[Hardware]:
    doc = read_toml(path, text)
    return [hardware_from_dict(e, f"{path} #{i + 1}") for i, e in enumerate(_entries(doc, "hardware", str(path)))]


def load_model_file(path: Path | str, text: str | None = None) -> list[Architecture]:
    if str(path).lower().endswith(".json"):  # a Hugging Face config.json (model/inputs/hf_config.py)
        try:
            return [load_hf_config(path, text, MAX_FILE_BYTES)]
        except ConfigFieldError as exc:
            raise PresetError(str(path), exc.field, exc.problem) from None
    doc = read_toml(path, text)
    return [architecture_from_dict(e, f"{path} #{i + 1}") for i, e in enumerate(_entries(doc, "model", str(path)))]


@cache
def hardware_presets() -> dict[str, Hardware]:
    items = load_hardware_file("hardware.toml", _resource_text("hardware.toml"))
    return {hw.key: hw for hw in items}


@cache
def model_presets() -> dict[str, Architecture]:
    items = load_model_file("models.toml", _resource_text("models.toml"))
    return {m.key: m for m in items}


@cache
def references() -> dict[str, Reference]:
    doc = read_toml("references.toml", _resource_text("references.toml"))
    allowed = {f.name for f in fields(Reference)}
    out = {}
    for e in doc.get("reference", []):
        out[e["key"]] = Reference(**{k: v for k, v in e.items() if k in allowed})
    return out


@cache
def workload_library() -> dict[str, dict]:
    """Workload rows of the heatmap: plain dicts of Scenario fields plus name/description/model/source."""
    doc = read_toml("workloads.toml", _resource_text("workloads.toml"))
    return {w["key"]: dict(w) for w in doc.get("workload", [])}


def find(presets: Mapping[str, Any], name: str, what: str):
    """Look a preset up by key or display name (case-insensitive); a miss names the choices."""
    lowered = name.lower()
    for key, item in presets.items():
        if key.lower() == lowered or getattr(item, "name", "").lower() == lowered:
            return item
    choices = ", ".join(presets)
    if len(choices) > 120:  # a long list would run past one line: the nearest keys, and where to see them all
        near = difflib.get_close_matches(str(name).lower(), [k.lower() for k in presets], n=3)
        choices = f"one of {len(presets)} keys: " + (f"did you mean {', '.join(near)}?" if near
                                                     else ", ".join(list(presets)[:4]) + ", …")
        raise ValidationError(what, name, choices)
    raise ValidationError(what, name, "one of " + choices)
