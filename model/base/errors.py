"""The error types the model raises for bad input: ValidationError, and MissingLinkError for an option the hardware
lacks a link for."""

from __future__ import annotations

import difflib
from collections.abc import Collection


class ValidationError(ValueError):
    """An input outside its allowed range: names the field, the value and what is allowed."""

    def __init__(self, field: str, value: object, allowed: str):
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field} = {shown(value)} is not allowed: {allowed}")


class MissingLinkError(ValidationError):
    """A refusal because the hardware lacks a field an option moves bytes over (#26): `missing` names the absent
    field(s) ("host_link_bw"), `why` says so for a reader ("H100 has no host link: host_link_bw is absent"), and
    the panels show `why` as "not available on this hardware" instead of parsing the message."""

    def __init__(self, field: str, value: object, allowed: str, missing: str, why: str):
        self.missing = missing
        self.why = why
        super().__init__(field, value, allowed)


SHOWN_MAX = 20  # characters of a value in a message; a longer one is shortened


def shown(value: object) -> str:
    """A value as a reader typed it: numpy scalars and one-element sequences as the number itself, whole floats
    without the ".0" (16777217, not [16777217.0] or np.float64(16777217.0)); strings quoted, control characters
    escaped. A value longer than 20 characters is shortened: `1000…000 (400 digits)`, `'abcdefgh…' (5000
    characters)`, so that a message stays one short line."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()  # numpy scalar or array -> Python
    while isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** SHOWN_MAX:
        digits = _digits(abs(value))
        return f"{'-' if value < 0 else ''}{digits[:4]}…{digits[-3:]} ({len(digits)} digits)"
    text = repr(value)
    if isinstance(value, float) and len(text) > SHOWN_MAX:
        return f"{value:.6g}"
    if len(text) <= SHOWN_MAX:
        return text
    return f"{text[:12]}…{text[-4:]} ({len(text)} characters)"


def _digits(n: int) -> str:
    """The decimal digits of a non-negative int, even past Python's 4300-digit str() limit (then the leading
    digits are approximate beyond float precision, which a shortened value does not show anyway)."""
    try:
        return str(n)
    except ValueError:
        count = int(n.bit_length() * 0.30102999566398120) + 1
        while 10 ** (count - 1) > n:
            count -= 1
        while 10 ** count <= n:
            count += 1
        head = str(n // 10 ** (count - 4))
        tail = str(n % 1000).zfill(3)
        return head + "0" * (count - 7) + tail


def shown_key(name: object) -> str:
    """A file's key as a message names it: as written, or shortened and escaped when long or unprintable."""
    return name if isinstance(name, str) and name.isprintable() and len(name) <= SHOWN_MAX else shown(name)


def unknown_key(what: str, name: object, known: Collection[str], where: str = "") -> str:
    """"is not a <what>" with the nearest known keys: a list of every key would run past one line."""
    near = difflib.get_close_matches(str(name)[:200], list(known), n=3)
    hint = (f"did you mean {', '.join(near)}?" if near
            else f"{len(known)} keys are known" + (f": see {where}" if where else ""))
    return f"is not a {what} ({hint})"
