"""The one guard for text that comes from a file (TOML presets, user hardware, session and deck files).

A string is accepted when it is valid Unicode (no unpaired surrogate such as ``"\\ud800"``, which JSON can
spell but UTF-8 cannot write back, so the file could never be saved again) and is at most its kind's length:
names 200, titles 300, captions and notes 2,000 characters (a 100,000-character slide title crashed Qt's text
layout). Where such text is printed, `escaped` shows control characters as escapes, on one line. A refusal is one line that names the field and the limit and
never echoes the whole text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from trinity_desktop.model.base.errors import ValidationError


@dataclass(frozen=True)
class TextKind:
    """What a string is, and its limit: at most `max_chars` characters."""

    label: str
    max_chars: int


NAME = TextKind("name", 200)
TITLE = TextKind("title", 300)
CAPTION = TextKind("caption", 2_000)
NOTE = TextKind("note", 2_000)               # sources, notes and status of a preset value
LAYOUT = TextKind("saved layout", 200_000)   # base64 of QMainWindow.saveState(): a few kB in practice

PREVIEW_CHARS = 20


class _Preview(str):
    """A text's preview, shown as it is in a ValidationError (not quoted a second time)."""

    def __repr__(self) -> str:
        return str(self)


def escaped(text: str) -> str:
    """`text` on one line: control characters, surrogates and other unprintable ones as Python escapes."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def preview(text: str) -> str:
    """The start of a text for a message: at most PREVIEW_CHARS characters, escaped, with its length."""
    if len(text) <= PREVIEW_CHARS:
        return _Preview(f"'{escaped(text)}'")
    return _Preview(f"'{escaped(text[:PREVIEW_CHARS])}…' ({len(text):,} characters)")


def problem(text: str, kind: TextKind) -> str:
    """What `text` would have to be as a `kind` (the `allowed` of the refusal), or "" when it is acceptable."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # the only str UTF-8 cannot encode: a lone surrogate
        code = ord(text[exc.start])
        return f"valid Unicode text (it holds an unpaired surrogate, U+{code:04X} at character {exc.start})"
    if len(text) > kind.max_chars:
        return f"a {kind.label} of at most {kind.max_chars:,} characters (it has {len(text):,})"
    return ""


def check_text(field: str, value: object, kind: TextKind) -> str:
    """`value` when it is acceptable text of this kind; else ValidationError naming `field` and the rule."""
    if not isinstance(value, str):
        raise ValidationError(field, _Preview(type(value).__name__), f"text (a {kind.label})")
    allowed = problem(value, kind)
    if allowed:
        raise ValidationError(field, preview(value), allowed)
    return value


def check_texts(field: str, values: Iterable[object], kind: TextKind) -> tuple[str, ...]:
    """Each of `values` through `check_text` (field[i] in the message)."""
    return tuple(check_text(f"{field}[{i}]", v, kind) for i, v in enumerate(values))


def shortened(value: str, kind: TextKind) -> str:
    """An edit typed in the app (not read from a file) longer than its kind's limit: cut at the limit with "…"
    as the note that it was shortened; an unpaired surrogate becomes U+FFFD."""
    value = "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in value)
    return value if len(value) <= kind.max_chars else value[:kind.max_chars - 1] + "…"


def unwritable_text(value: object, path: str = "") -> str:
    """The JSON path of the first string inside `value` (dicts, lists, tuples) that UTF-8 cannot write, or ""."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path or "text"
        return ""
    if isinstance(value, dict):
        for key, item in value.items():
            found = unwritable_text(key, path) or unwritable_text(item, f"{path}.{key}" if path else str(key))
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = unwritable_text(item, f"{path}[{i}]")
            if found:
                return found
    return ""
