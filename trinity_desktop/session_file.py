"""Session files: a scenario, and optionally a talk deck, as versioned JSON (no Qt).

Layout of version 2 (and 1)::

    {"trinity_session": 2,
     "app": "Trinity Desktop",
     "scenario": {<every Scenario field>, "hardware": {<every Hardware field>}, "model": {<every Architecture
                  field>}, "efficiency": {...}, "techniques": [...]},
     "deck": null | {"title": ..., "slides": [{"title", "caption", "scenario", "docks", "layout", "focus", "flow_phase" (optional)}]}}

Hardware and model are written in full (sources, status and notes included) so that a user-loaded definition
survives without its TOML file. Reading follows glue's pattern: the version key picks a loader from `LOADERS`;
a future format adds its loader (and, if needed, an upgrade of older documents) without touching v1.
Version 2 has version 1's layout; it reads `pp` of an inference (prefill, decode) scenario as the pipeline
stages of pipeline-parallel inference. Version 1 timed inference with tensor parallelism over all GPUs and
ignored `pp` there (a training field), so a version-1 document is upgraded with pp = 1 for inference scenarios
(`_upgrade_v1`): it keeps its meaning.

Loading validates every value through the model's own constructors (`Hardware`, `Architecture`, `Scenario`)
and evaluates each scenario once, so a file that loads is a file the app can show. Every problem raises one
`SessionFileError` naming it (malformed JSON with line and column, truncated, oversized, newer version, or the
path of the bad field such as ``scenario.hardware.hbm_bw``); nothing is returned unless everything is valid.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

from trinity_desktop.deck import MAX_SLIDE_PANELS, Deck, Slide, panel_docks
from trinity_desktop.model import Architecture, Efficiency, Hardware, Scenario, ValidationError, evaluate
from trinity_desktop.model.base.errors import shown, shown_key, unknown_key
from trinity_desktop.model.base.files import FileRefused, FileTooLarge, read_capped, write_atomically
from trinity_desktop.model.base.ranges import (
    ARCHITECTURE_RULES,
    EFFICIENCY_LIMITS,
    HARDWARE_RULES,
    QUANTITY_RULE,
    SCENARIO_LIMITS,
    describe,
    in_float64,
)
from trinity_desktop.model.inputs.text_guard import (
    CAPTION,
    LAYOUT,
    NAME,
    NOTE,
    TITLE,
    TextKind,
    check_text,
    unwritable_text,
)
from trinity_desktop.refusals import one_line

VERSION_KEY = "trinity_session"
CURRENT_VERSION = 2
MAX_BYTES = 5_000_000  # 5 MB (decimal): a 30-slide deck is ~0.2 MB; anything bigger is not ours
APP_NAME = "Trinity Desktop"
SUFFIX = ".trinity.json"  # suggested file name ending for dialogs; any name loads


class SessionFileError(ValueError):
    """A session file (or text) that cannot be used. `field` is the JSON path of the bad value, if any; the
    message is one short line (refusals.one_line)."""

    def __init__(self, message: str, field: str = ""):
        super().__init__(one_line(message))
        self.field = field


# ---------------------------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------------------------

def _to_json(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _to_json(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _to_json(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_to_json(v) for v in value]
    return value


def _slide_to_json(slide: Slide) -> dict:
    return {"title": slide.title, "caption": slide.caption, "scenario": _to_json(slide.scenario),
            "docks": list(slide.docks), "layout": slide.layout, "focus": list(slide.focus),
            **({"flow_phase": slide.flow_phase} if slide.flow_phase else {})}


def to_document(scenario: Scenario, deck: Deck | None = None) -> dict:
    """The JSON-ready dict of the current version."""
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, not {type(scenario).__name__}")
    if deck is not None and not isinstance(deck, Deck):
        raise TypeError(f"deck must be a Deck or None, not {type(deck).__name__}")
    doc_deck = None if deck is None else {"title": deck.title, "slides": [_slide_to_json(s) for s in deck.slides]}
    return {VERSION_KEY: CURRENT_VERSION, "app": APP_NAME, "scenario": _to_json(scenario), "deck": doc_deck}


def dumps(scenario: Scenario, deck: Deck | None = None) -> str:
    """The session as JSON text (UTF-8, indented, floats written exactly)."""
    document = to_document(scenario, deck)
    bad = unwritable_text(document)
    if bad:  # an unpaired surrogate: UTF-8 cannot write it (and the file could not be read back)
        raise SessionFileError(f"cannot be saved: the text of {bad} is not valid Unicode (an unpaired "
                               "surrogate); the previous file is kept", bad)
    try:
        return json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError as exc:  # a NaN or infinity slipped into a value
        raise SessionFileError(f"cannot be saved: {exc}") from None


def save(path: str | os.PathLike, scenario: Scenario, deck: Deck | None = None) -> Path:
    """Write atomically (`write_atomically`: a temporary file in the same folder, fsync, `os.replace`).

    An existing file at `path` is either left as it was or replaced whole, never half-written.
    """
    return write_atomically(path, dumps(scenario, deck).encode("utf-8"))


# ---------------------------------------------------------------------------------------------------------
# reading: text -> JSON document -> version loader
# ---------------------------------------------------------------------------------------------------------

def _is_truncated(text: str) -> bool:
    """True when the text ends inside a string or with an object/array still open (a cut-off file)."""
    depth, in_string, escape = 0, False, False
    for ch in text:
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return in_string or depth > 0


def _parse(text: str | bytes) -> dict:
    if isinstance(text, (bytes, bytearray)):
        if len(text) > MAX_BYTES:
            raise SessionFileError(_oversize(len(text)))
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise SessionFileError(f"not a Trinity Desktop session file: not UTF-8 text (byte {exc.start})") from None
    if not isinstance(text, str):
        raise TypeError(f"session text must be str or bytes, not {type(text).__name__}")
    if len(text) > MAX_BYTES or len(text.encode("utf-8")) > MAX_BYTES:
        raise SessionFileError(_oversize(len(text.encode("utf-8"))))
    if not text.strip():
        raise SessionFileError("empty file: not a Trinity Desktop session file")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        if _is_truncated(text):
            raise SessionFileError(f"truncated file: the JSON ends early (line {exc.lineno}, column {exc.colno}: "
                                   f"{exc.msg}); it was cut off while being written or copied") from None
        raise SessionFileError(f"malformed JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:
        raise SessionFileError("not a Trinity Desktop session file: its JSON is nested too deeply") from None
    except ValueError:  # an integer of more than 4300 digits (int's string-conversion limit)
        raise SessionFileError(f"a number has more than {sys.get_int_max_str_digits()} digits") from None
    if not isinstance(doc, dict):
        raise SessionFileError(f"not a Trinity Desktop session file: the top level is a JSON "
                               f"{type(doc).__name__}, not an object")
    return doc


def _oversize(size: int) -> str:
    return (f"oversized file: {size / 1e6:.1f} MB or more; session files are at most {MAX_BYTES / 1e6:.0f} MB "
            "(refused without reading the rest)")


def _version(doc: dict) -> int:
    if VERSION_KEY not in doc:
        raise SessionFileError(f"not a Trinity Desktop session file: no '{VERSION_KEY}' version key",
                               VERSION_KEY)
    version = doc[VERSION_KEY]
    if isinstance(version, bool) or not isinstance(version, int):
        raise SessionFileError(f"{VERSION_KEY}: the format version must be a whole number, got {shown(version)}",
                               VERSION_KEY)
    if version > CURRENT_VERSION:
        raise SessionFileError(f"written by a newer Trinity Desktop: version {version}, this one reads up to "
                               f"{CURRENT_VERSION}. Update Trinity Desktop to open it.", VERSION_KEY)
    if version not in LOADERS:
        raise SessionFileError(f"{VERSION_KEY}: unknown format version {shown(version)} (this app reads "
                               f"{', '.join(map(str, sorted(LOADERS)))})", VERSION_KEY)
    return version


def loads(text: str | bytes) -> tuple[Scenario, Deck | None]:
    """Parse and validate a session; raises `SessionFileError` before returning anything if any part is bad."""
    doc = _parse(text)
    return LOADERS[_version(doc)](doc)


def load(path: str | os.PathLike) -> tuple[Scenario, Deck | None]:
    """Read a session file; the error message starts with the file's name and names the problem."""
    path = Path(path)
    try:
        data = read_capped(path, MAX_BYTES)  # regular files only, never more than the limit
    except FileTooLarge as exc:
        raise SessionFileError(f"{path.name}: {_oversize(exc.size)}") from None
    except FileRefused as exc:
        raise SessionFileError(f"{path.name or path}: {exc}") from None
    try:
        return loads(data)
    except SessionFileError as exc:
        raise SessionFileError(f"{path.name}: {exc}", exc.field) from None


# ---------------------------------------------------------------------------------------------------------
# version 1
# ---------------------------------------------------------------------------------------------------------

_FIELDS_BY_CLASS = {cls: {f.name: f for f in fields(cls)} for cls in (Hardware, Architecture, Efficiency, Scenario)}
_NESTED = {"Hardware": Hardware, "Architecture": Architecture, "Efficiency": Efficiency}
# Hardware values must be physical: capacities and bandwidths > 0 where the model divides by them, >= 0 else.
_POSITIVE = {(Hardware, "hbm_bytes"), (Hardware, "hbm_bw")}
_RULES = {Hardware: HARDWARE_RULES, Architecture: ARCHITECTURE_RULES,
          Scenario: {k: v.rule for k, v in SCENARIO_LIMITS.items()},
          Efficiency: {k: v.rule for k, v in EFFICIENCY_LIMITS.items()}}


def _bad(path: str, problem: str, value: Any = MISSING) -> SessionFileError:
    got = "" if value is MISSING else f" (got {shown(value)})"
    return SessionFileError(f"{path}: {problem}{got}", path)


def _number(path: str, value: Any, cls: type, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(path, "must be a number", value)
    if not in_float64(value):  # before float(): 400 digits would overflow
        raise _bad(path, f"must be {describe(_RULES[cls].get(name, QUANTITY_RULE))}", value)
    if (cls, name) in _POSITIVE and not value > 0:
        raise _bad(path, "must be a number > 0", value)
    if cls in (Hardware, Architecture) and value < 0:
        raise _bad(path, "must be a number >= 0", value)
    return float(value)


def _convert(path: str, annotation: str, value: Any, cls: type, name: str) -> Any:
    if annotation == "str":
        return _text(path, value, NOTE if name in ("note", "source") else NAME)
    if annotation == "bool":
        if not isinstance(value, bool):
            raise _bad(path, "must be true or false", value)
        return value
    if annotation == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise _bad(path, "must be a whole number", value)
        return value
    if annotation == "float":
        return _number(path, value, cls, name)
    if annotation.startswith("Mapping[str, "):
        if not isinstance(value, dict):
            raise _bad(path, "must be an object of names to values", value)
        inner = annotation[len("Mapping[str, "):-1]
        out = {}
        for k, v in value.items():
            _text(f"{path}.{k}", k, NAME)
            if inner == "float":
                v = _number(f"{path}.{k}", v, cls, name)
                if name == "peak_flops" and not v > 0:
                    raise _bad(f"{path}.{k}", "must be a number > 0 (FLOP/s)", v)
            else:
                v = _text(f"{path}.{k}", v, NOTE)
            out[k] = v
        return out
    if annotation == "tuple[str, ...]":
        if not isinstance(value, list):
            raise _bad(path, "must be a list of text", value)
        return tuple(_text(f"{path}[{i}]", v, NAME) for i, v in enumerate(value))
    if annotation in _NESTED:
        return _build(_NESTED[annotation], value, path)
    raise _bad(path, f"has a type this version cannot read ({annotation})")  # a model change without a loader


def _error_from_validation(exc: ValidationError, cls: type, values: dict, path: str) -> SessionFileError:
    """Map a model ValidationError ("<key>.hbm_bw", "efficiency.compute", "tp") onto this file's JSON path."""
    name = str(exc.field)
    for prefix in (f"{values.get('key', '')}.", "efficiency."):
        if prefix != "." and name.startswith(prefix):
            name = name[len(prefix):]
            break
    allowed = str(exc.allowed)
    verb = "" if allowed.startswith(("must", "is ")) else "must be "
    return _bad(f"{path}.{name}", f"{verb}{allowed}", exc.value)


def _build(cls: type, data: Any, path: str):
    if not isinstance(data, dict):
        raise _bad(path, "must be an object", data)
    known = _FIELDS_BY_CLASS[cls]
    for key in data:
        if key not in known:
            raise _bad(f"{path}.{shown_key(key)}", unknown_key(f"{cls.__name__} field", key, known))
    values = {}
    for name, f in known.items():
        if name not in data:
            if f.default is MISSING and f.default_factory is MISSING:
                raise _bad(f"{path}.{name}", "is missing (required)")
            continue
        values[name] = _convert(f"{path}.{name}", str(f.type), data[name], cls, name)
    try:
        return cls(**values)
    except ValidationError as exc:
        raise _error_from_validation(exc, cls, values, path) from None


def _scenario_v1(data: Any, path: str) -> Scenario:
    scenario = _build(Scenario, data, path)
    try:
        evaluate(scenario)
    except (ValidationError, ArithmeticError) as exc:
        raise _bad(path, f"cannot be evaluated: {exc}") from None
    return scenario


def _text(path: str, value: Any, kind: TextKind) -> str:
    """Text read from the file, through the one text guard (valid Unicode, no control characters, the kind's
    length limit); a refusal names the JSON path."""
    if not isinstance(value, str):
        raise _bad(path, "must be text", value)
    try:
        return check_text(path, value, kind)
    except ValidationError as exc:
        raise SessionFileError(str(exc), path) from None


def _slide_v1(data: Any, path: str) -> Slide:
    if not isinstance(data, dict):
        raise _bad(path, "must be an object", data)
    known = ("title", "caption", "scenario", "docks", "layout", "focus", "flow_phase")
    for key in data:
        if key not in known:
            raise _bad(f"{path}.{shown_key(key)}", f"is not a slide field (known: {', '.join(known)})")
    for key in ("title", "scenario"):
        if key not in data:
            raise _bad(f"{path}.{key}", "is missing (required)")
    docks = data.get("docks", [])
    if not isinstance(docks, list) or not all(isinstance(d, str) for d in docks):
        raise _bad(f"{path}.docks", "must be a list of dock names", docks)
    docks = [_text(f"{path}.docks[{i}]", d, NAME) for i, d in enumerate(docks)]
    if len(panel_docks(docks)) > MAX_SLIDE_PANELS:
        raise _bad(f"{path}.docks", f"shows {len(panel_docks(docks))} panels; a slide shows at most {MAX_SLIDE_PANELS}")
    layout = _text(f"{path}.layout", data.get("layout", ""), LAYOUT)
    if layout:
        try:
            base64.b64decode(layout.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError):
            raise _bad(f"{path}.layout", "must be base64 text (a saved window layout) or empty") from None
    focus = data.get("focus", ["", ""])
    if not isinstance(focus, list) or len(focus) != 2 or not all(isinstance(x, str) for x in focus):
        raise _bad(f"{path}.focus", "must be a pair [what, key] of text", focus)
    focus = [_text(f"{path}.focus[{i}]", x, NAME) for i, x in enumerate(focus)]
    return Slide(title=_text(f"{path}.title", data["title"], TITLE),
                 caption=_text(f"{path}.caption", data.get("caption", ""), CAPTION),
                 scenario=_scenario_v1(data["scenario"], f"{path}.scenario"), docks=tuple(docks), layout=layout,
                 focus=(focus[0], focus[1]), flow_phase=_text(f"{path}.flow_phase", data.get("flow_phase", ""), NAME))


def _deck_v1(data: Any, path: str) -> Deck | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise _bad(path, "must be an object or null", data)
    for key in data:
        if key not in ("title", "slides"):
            raise _bad(f"{path}.{shown_key(key)}", "is not a deck field (known: title, slides)")
    slides = data.get("slides", [])
    if not isinstance(slides, list):
        raise _bad(f"{path}.slides", "must be a list of slides", slides)
    return Deck(title=_text(f"{path}.title", data.get("title", ""), TITLE),
                slides=tuple(_slide_v1(s, f"{path}.slides[{i}]") for i, s in enumerate(slides)))


def _load_v1(doc: dict) -> tuple[Scenario, Deck | None]:
    for key in doc:
        if key not in (VERSION_KEY, "app", "scenario", "deck"):
            raise _bad(shown_key(key), "is not a session key in version 1 (known: trinity_session, app, scenario, deck)")
    if "scenario" not in doc:
        raise _bad("scenario", "is missing (required)")
    scenario = _scenario_v1(doc["scenario"], "scenario")
    deck = _deck_v1(doc.get("deck"), "deck")
    return scenario, deck


def _inference_without_pp(scenario: Any) -> Any:
    if isinstance(scenario, dict) and scenario.get("kind") in ("prefill", "decode"):
        return {**scenario, "pp": 1}
    return scenario


def _upgrade_v1(doc: dict) -> tuple[Scenario, Deck | None]:
    """A version-1 document: its inference scenarios (and slides') get pp = 1, tensor parallelism over all GPUs as
    version 1 timed them; then the (unchanged) layout is read as version 2."""
    doc = dict(doc)
    doc["scenario"] = _inference_without_pp(doc.get("scenario"))
    deck = doc.get("deck")
    if isinstance(deck, dict) and isinstance(deck.get("slides"), list):
        doc["deck"] = {**deck, "slides": [{**sl, "scenario": _inference_without_pp(sl.get("scenario"))}
                                          if isinstance(sl, dict) and "scenario" in sl else sl
                                          for sl in deck["slides"]]}
    return _load_v1(doc)


LOADERS: dict[int, Callable[[dict], tuple[Scenario, Deck | None]]] = {1: _upgrade_v1, 2: _load_v1}
