"""One home for colours: no colour literal in ui/ outside the theme module. A panel draws with theme roles
(`theme.INK`, `theme.PAPER`, `theme.RESOURCE_COLORS[...]`, ...) so that the dark and high-contrast themes can
recolour what must follow them, and so that one colour has one name."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

UI = Path(__file__).resolve().parents[2] / "ui"
NAMED = r"(?:w|k|r|g|b|c|m|y|white|black|red|green|blue|gray|grey|yellow|orange|purple|cyan|magenta)"
LITERALS = [
    re.compile(r"#[0-9a-fA-F]{6}\b|[\"']#[0-9a-fA-F]{3}[\"']"),                 # '#rrggbb', '#rgb'
    re.compile(r"QColor\(\s*\d|mk(?:Color|Pen|Brush)\(\s*\(?\s*\d"),           # QColor(r, g, b), mkBrush(r, g, b)
    re.compile(rf"(?:mk(?:Color|Pen|Brush)|setBackground|TextItem)\(\s*[\"']{NAMED}[\"']"),  # mkPen("w")
    re.compile(rf"(?:background|color|symbolBrush|symbolPen|brush|pen)\s*=\s*[\"']{NAMED}[\"']"),  # color="k"
    re.compile(rf"color\s*:\s*{NAMED}\b"),                                      # style sheets: color: white
    re.compile(r"Qt\.(?:GlobalColor\.)?(?:white|black|red|green|blue|gray|yellow)\b"),
]
FILES = sorted(p for p in UI.glob("*.py") if p.name != "theme.py")


def _code_by_line(text: str) -> dict[int, str]:
    """Each line's code without its comment (a colour named in a comment is not a literal)."""
    lines: dict[int, list[str]] = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE):
            lines.setdefault(token.start[0], []).append(token.string)
    return {n: "".join(parts) for n, parts in lines.items()}


def literals_in(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    source = text.splitlines()
    return [f"{path.name}:{n}: {source[n - 1].strip()[:100]}" for n, code in sorted(_code_by_line(text).items())
            if any(p.search(code) for p in LITERALS)]


def test_the_patterns_find_each_kind_of_literal(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('a = "#1f77b4"\nb = QColor(10, 20, 30)\nc = pg.mkPen("w")\nd = label.setStyleSheet("color: white")\n'
                      'e = pg.TextItem("", color="k")\nf = theme.INK  # "#222222" in a comment is fine\n')
    assert [line.split(":")[1] for line in literals_in(sample)] == ["1", "2", "3", "4", "5"]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_no_colour_literal_outside_the_theme(path):
    assert literals_in(path) == []
