"""The one-line refusal: every message the command line (and a loader) prints when it refuses an input.

A refusal names the field, shows the value as typed and says what is allowed: "--seq-len 1000…000 (400 digits)
is not allowed: a whole number from 1 to 16777216". It stays on one line shorter than MAX_LINE characters: control
characters and newlines are shown as escapes (`escaped`), a value longer than 20 characters is shortened
(`shown`, model/base/errors.py), an echoed word over LONG_WORD characters keeps its start and its length, and a
line still too long keeps its start and says how long it was.
"""

from __future__ import annotations

import sys

from trinity_desktop.model.base.errors import shown
from trinity_desktop.model.inputs.text_guard import escaped

MAX_LINE = 200  # a refusal is shorter, its "trinity-desktop: error: " included
LONG_WORD = 120  # characters: a longer argument echoed in a message is shortened (its start and its length)
KEPT = 150  # characters kept of a line over MAX_LINE
ERROR = "trinity-desktop: error: "  # the prefix of every refusal on the terminal


def refusal(field: str, value: object, allowed: str) -> str:
    """ "<field> <value> is not allowed: <allowed>" on one short line."""
    return one_line(f"{field} {shown(value)} is not allowed: {allowed}")


def short_words(text: str) -> str:
    """Each space-separated word over LONG_WORD characters as its first 20 and its length."""
    return " ".join(
        w if len(w) <= LONG_WORD else f"{w[:20]}… ({len(w):,} characters)" for w in text.split(" ")
    )


def one_line(text: str, limit: int = MAX_LINE) -> str:
    """`text` escaped onto one line, its long words shortened, and cut to `limit` characters with its length."""
    line = short_words(escaped(text))
    if len(line) < limit:
        return line
    return f"{line[:KEPT].rstrip()}… ({len(line):,} characters)"


def print_refusal(message: str, prefix: str = ERROR) -> None:
    """One refusal or warning on stderr, on one short line (`one_line`); other output on stderr (Qt's and Python's
    own messages) passes unchanged."""
    print(one_line(prefix + message), file=sys.stderr)
