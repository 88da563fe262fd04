"""Entry point: `trinity-desktop` / `python -m trinity_desktop`.

  trinity-desktop [FILE]               open the app (and a session or deck file)
  trinity-desktop --screenshot PATH    render the main window (default layout) to a PNG and exit
                                       (offscreen: on a virtual 1920x1080 screen, or --screen WxH)
  trinity-desktop calc train|infer ... compute one scenario (add --json for machine-readable output)
  trinity-desktop plan train|infer ... search every layout (fastest, Pareto front; --json)
  trinity-desktop presets [--json]     list hardware and model presets
  trinity-desktop validate [--json] [--fit]  the model against published training and inference runs
  trinity-desktop bench [--json]       measure start-up, edit->repaint, memory and model speed against baselines
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence

START = time.perf_counter()  # program entry, before Qt and numpy are imported

CLI_COMMANDS = ("calc", "plan", "presets", "validate", "bench", "claims")
SCALE_MIN, SCALE_MAX = 1.0, 4.0  # --screenshot --scale: 4x of a 1920x1080 window is already 7680x4320


class _GuiParser(argparse.ArgumentParser):
    """Argument errors exit 2 with one line (argparse would print the usage text as well)."""

    def error(self, message: str):
        from trinity_desktop.refusals import one_line

        self.exit(2, one_line(f"{self.prog}: error: {message}") + "\n")


def _scale(text: str) -> float:
    """An argparse type: a screenshot scale factor from SCALE_MIN to SCALE_MAX (nan, 0, negative refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and SCALE_MIN <= value <= SCALE_MAX):
        raise argparse.ArgumentTypeError(f"{text} is outside the allowed range {SCALE_MIN:g} to {SCALE_MAX:g}")
    return value


MAX_ARGS = 1000  # command-line arguments: the longest real command has a few dozen


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    problem = _argv_problem(argv) or _stdout_problem(bool(argv) and argv[0] in CLI_COMMANDS)
    if problem:
        from trinity_desktop.refusals import print_refusal

        print_refusal(problem)
        return 2
    return _main(argv)


def _argv_problem(argv: list[str]) -> str:
    """Why the command line is refused before it is parsed (too many arguments, an empty command), or ""."""
    if len(argv) > MAX_ARGS:
        return f"{len(argv):,} arguments given; at most {MAX_ARGS:,} are allowed"
    if argv and argv[0] == "":
        return "an empty command or file name was given (see --help)"
    return ""


def _stdout_problem(cli: bool) -> str:
    """Why a command's output cannot be written (stdout closed: `>&-`), or "" (the window runs without a stdout,
    as a desktop launcher starts it). On a terminal whose encoding cannot write
    every character (LANG=C without UTF-8), characters it lacks are written as backslash escapes."""
    if sys.stdout is None:
        return "the standard output is closed; nothing can be written" if cli else ""
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    if encoding != "utf8" and hasattr(sys.stdout, "reconfigure"):
        try:
            sys.stdout.reconfigure(errors="backslashreplace")
        except (OSError, ValueError):
            pass
    return ""


def _main(argv: list[str]) -> int:
    if argv and argv[0] in CLI_COMMANDS:
        return _run_cli(argv)
    parser = _GuiParser(prog="trinity-desktop", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?", help="a session or deck file (.trinity.json) to open")
    parser.add_argument("--screenshot", metavar="PATH", help="render the main window to a PNG and exit")
    parser.add_argument("--scale", type=_scale, default=1.0,
                        help=f"scale factor for --screenshot, {SCALE_MIN:g} to {SCALE_MAX:g} (e.g. 2 for slides)")
    parser.add_argument("--present-to", metavar="DIR",
                        help="present FILE's deck and save one PNG per slide to DIR, then exit")
    parser.add_argument("--screen", metavar="WxH", type=_screen,
                        help="with QT_QPA_PLATFORM=offscreen: the virtual screen's size (default 1920x1080)")
    parser.add_argument("--startup-time", action="store_true", help="print the time to the window's first paint")
    parser.add_argument("--version", action="version", version=_version())
    args = parser.parse_args(argv)
    from trinity_desktop import app

    if app.no_display():  # Qt would abort (SIGABRT) with a six-line message
        app.say(app.no_display())
        return 2
    from trinity_desktop.layout_plan import use_virtual_screen

    use_virtual_screen(args.screen)

    if args.startup_time:
        return app.startup_time(START)
    if args.present_to:
        if not args.file:
            parser.error("--present-to needs a deck FILE")
        return app.present_slides(args.file, args.present_to)
    if args.screenshot:
        return app.screenshot(args.screenshot, args.scale, args.file)
    return app.run(args.file)


def _run_cli(argv: list[str]) -> int:
    """The CLI, with output that cannot be written (a full disk, /dev/full) reported in one line, exit 2."""
    from trinity_desktop.cli import run_cli
    from trinity_desktop.refusals import print_refusal
    from trinity_desktop.stop_signals import Stopped, stopping_cleanly

    try:
        with stopping_cleanly():
            code = run_cli(argv)
            sys.stdout.flush()
    except Stopped as exc:   # Ctrl+C or SIGTERM during a search or a fit: one line, the signal's status
        print_refusal(str(exc), prefix="trinity-desktop: ")
        return exc.status
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as Unix tools do
        _detach_stdout()
        return 0
    except OSError as exc:
        _detach_stdout()
        print_refusal(f"cannot write the output: {exc.strerror or exc}")
        return 2
    return code


def _detach_stdout() -> None:
    """Point stdout at the null device so that the interpreter's final flush cannot fail again."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _screen(text: str) -> tuple[int, int]:
    from trinity_desktop.layout_plan import parse_screen

    try:
        return parse_screen(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _version() -> str:
    from trinity_desktop import __version__

    return f"trinity-desktop {__version__}"


if __name__ == "__main__":
    sys.exit(main())
