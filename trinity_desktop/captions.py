"""Slide captions that quote the panels' numbers: a caption is a template filled from the slide's Results.

A template names values in braces: "{model} on {gpus} {hardware}: {step_time} per step, {memory} of
{capacity} per GPU". `caption_values(results)` computes them from the same Results the panels draw, formatted
as the panels format them (`ui.units`), so a caption can never disagree with its slide. `{prev_<name>}`
quotes the previous slide's value ("activations fall from {prev_activations} to {activations}"). Values of
the model views a slide's panels draw (`{claims_agree}`, `{routing_cost_fall}`...) come from
trinity_desktop/caption_views.py and are computed only when a template names them. A name that is not a value,
or a previous-slide value on a first slide, is refused in one line (`CaptionError`), as is any placeholder but a
plain `{name}` and a caption over 2,000 characters.
"""

from __future__ import annotations

import string

from trinity_desktop.caption_views import VIEWS, key, view_of, view_values
from trinity_desktop.model import Results
from trinity_desktop.model.inputs.text_guard import CAPTION, escaped
from trinity_desktop.ui.stage_labels import INFER_TIME_PART_TEXT
from trinity_desktop.ui.units import fmt_seconds

PREVIOUS = "prev_"
CAPTION_MAX = CAPTION.max_chars  # characters of a caption (2,000; model/inputs/text_guard.py)


class CaptionError(ValueError):
    """A caption template names a value that does not exist."""


def _gb(value: float) -> str:
    """Bytes in GB with one decimal, as the Memory and time panel writes them."""
    return f"{value / 1e9:.1f} GB"


def _pct(value: float) -> str:
    return f"{100 * value:.0f}%"


def _parallelism(r: Results) -> dict[str, str]:
    sc = r.scenario
    out = {"gpus": f"{sc.gpus:,}", "tp": str(sc.tp), "pp": str(sc.pp), "cp": str(sc.cp), "zero": str(sc.zero),
           "virtual_stages": str(sc.virtual_stages), "compute_efficiency": _pct(sc.efficiency.compute)}
    if r.kind == "train":
        out.update(dp=f"{int(r.train['dp']):,}", micro_batches=str(int(r.train["micro_batches"])),
                   global_batch=f"{sc.global_batch:,}", seq_len=f"{sc.seq_len:,}",
                   tokens_per_step=f"{sc.global_batch * sc.seq_len / 1e6:.1f} million")
    else:
        out.update(batch=f"{sc.batch:,}", context=f"{sc.prompt_len + sc.gen_len:,}", prompt=f"{sc.prompt_len:,}",
                   kv_window=f"{sc.kv_window:,}", kv_sinks=str(sc.kv_sinks),
                   razor_fraction=_pct(sc.razor_retrieval_fraction))
    return out


def results_values(r: Results) -> dict[str, str]:
    """Every value of the slide's own Results a caption may quote, formatted for people."""
    sc = r.scenario
    pressures = dict(zip(("compute", "bandwidth", "memory"), r.pressure.as_tuple(), strict=True))
    # memory items are per device, as the Memory and time panel draws them
    values = {"model": sc.model.name, "hardware": sc.hardware.name, "binding": r.bottleneck,
              "step_time": fmt_seconds(r.time_total), "memory": _gb(r.memory_total),
              "capacity": f"{r.capacity / 1e9:.0f} GB", "fits": "fits" if r.fits else "does not fit",
              **{f"{name}_pressure": f"{value:.2f}" for name, value in pressures.items()},
              **{key(name): _gb(value) for name, value in r.memory.items()},
              **{f"{key(INFER_TIME_PART_TEXT.get(name, name))}_time": fmt_seconds(value)  # inference parts: by text
                 for name, value in r.time.items()},
              **_parallelism(r)}
    if r.kind == "train":
        values["mfu"] = f"{100 * r.train['mfu']:.1f}%"
        if "pipeline_bubble" in r.time:
            values["bubble_share"] = _pct(r.time["pipeline_bubble"] / r.time_total)
        if r.train.get("host_bytes", 0.0) > 0:
            values["host_memory"] = _gb(r.train["host_bytes"])
    else:
        values["token_time"] = fmt_seconds(r.infer.get("time_per_output_token_s", r.time_total))
    return values


class CaptionValues:
    """The values a caption may quote: the slide's Results values, each view's values on first use (one view
    computed at most once), and with `previous` the previous slide's as `prev_<name>`."""

    def __init__(self, results: Results, previous: CaptionValues | None = None):
        self.results = results
        self.previous = previous
        self._values = results_values(results)
        self._views: set[str] = set()

    def __getitem__(self, name: str) -> str:
        if name.startswith(PREVIOUS):
            if self.previous is None:
                raise KeyError(name)
            return self.previous[name.removeprefix(PREVIOUS)]
        view = view_of(name)
        if view is not None and view not in self._views:
            self._views.add(view)
            try:
                self._values.update(view_values(view, self.results))
            except ValueError as exc:   # a view refusing this slide's scenario: the caption cannot quote it
                raise CaptionError(f"the caption quotes {{{name}}}, which this slide cannot compute: {exc}") from None
        return self._values[name]

    def __contains__(self, name: str) -> bool:
        try:
            self[name]
        except KeyError:
            return False
        return True

    def known(self, name: str) -> list[str]:
        """The names a caption could have meant: the view's own values, or the Results' values and the views."""
        view = view_of(name)
        if view is not None:
            return sorted(k for k in self._values if k.startswith(view + "_"))
        return sorted([*results_values(self.results), *(f"{v}_..." for v in VIEWS)])


def caption_values(r: Results, previous: Results | None = None) -> CaptionValues:
    """Every value a caption may quote for a slide (and, given, its previous slide), computed on first use."""
    return CaptionValues(r, None if previous is None else CaptionValues(previous))


def template_names(template: str) -> list[str]:
    """The value names a template quotes, in order. Only plain `{name}` placeholders are allowed: a format spec
    (`{model:>99999999}` would build a string of 100 MB), a conversion (`{model!r}`), an attribute or an index
    (`{model.__class__}`, `{model[0]}`) and a template over CAPTION_MAX characters are refused (CaptionError)."""
    if len(template) > CAPTION_MAX:
        raise CaptionError(f"the caption is {len(template):,} characters; at most {CAPTION_MAX:,} are allowed")
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as exc:   # an unmatched brace
        raise CaptionError(f"the caption is not a valid template: {exc}") from None
    names = []
    for _, name, spec, conversion in parts:
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            typed = name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
            shown_field = escaped(typed if len(typed) <= 40 else typed[:40] + "…")
            raise CaptionError(f"the caption's placeholder {{{shown_field}}} is not allowed: only plain {{name}} "
                               "placeholders (no format, conversion, attribute or index)")
        names.append(name)
    return names


def fill_caption(template: str, results: Results, previous: Results | None = None) -> str:
    """The caption with every {name} replaced by the slide's value ({prev_name}: the previous slide's)."""
    names = template_names(template)
    values = caption_values(results, previous)
    missing = [n for n in names if n not in values]
    if missing:
        name = missing[0]
        where = "the previous slide" if name.startswith(PREVIOUS) and previous is None else "this slide"
        raise CaptionError(f"the caption quotes {{{name}}}, which {where} does not have "
                           f"(known: {', '.join(values.known(name.removeprefix(PREVIOUS)))})")
    try:
        return template.format_map(values)
    except (ValueError, IndexError) as exc:
        raise CaptionError(f"the caption is not a valid template: {exc}") from None


def slide_caption(deck, index: int, results: Results | None = None) -> str:
    """Slide `index`'s caption as the audience reads it: filled from its Results (evaluated when not given)
    and the previous slide's; a caption that is not a template of known values is shown as typed."""
    from trinity_desktop.model import ValidationError, evaluate

    slide = deck.slides[index]
    try:
        names = template_names(slide.caption)
    except CaptionError:
        return slide.caption
    if not names:
        return slide.caption
    try:
        results = results or evaluate(slide.scenario)
        previous = (evaluate(deck.slides[index - 1].scenario)
                    if index > 0 and any(n.startswith(PREVIOUS) for n in names) else None)
        return fill_caption(slide.caption, results, previous)
    except (CaptionError, ValidationError):
        return slide.caption
