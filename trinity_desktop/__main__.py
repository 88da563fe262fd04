"""Entry point: `trinity-desktop` / `python -m trinity_desktop`.

  trinity-desktop [FILE]               open the app (and a session or deck file)
  trinity-desktop --screenshot PATH    render the main window (default layout) to a PNG and exit
  trinity-desktop calc train|infer ... compute one scenario (add --json for machine-readable output)
  trinity-desktop presets [--json]     list hardware and model presets
  trinity-desktop bench [--json]       measure start-up, edit->repaint, memory and model speed against baselines
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

START = time.perf_counter()  # program entry, before Qt and numpy are imported

CLI_COMMANDS = ("calc", "presets", "bench")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in CLI_COMMANDS:
        from trinity_desktop.cli import run_cli

        return run_cli(argv)
    parser = argparse.ArgumentParser(prog="trinity-desktop", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?", help="a session or deck file (.trinity.json) to open")
    parser.add_argument("--screenshot", metavar="PATH", help="render the main window to a PNG and exit")
    parser.add_argument("--scale", type=float, default=1.0, help="scale factor for --screenshot (e.g. 2 for slides)")
    parser.add_argument("--present-to", metavar="DIR",
                        help="present FILE's deck and save one PNG per slide to DIR, then exit")
    parser.add_argument("--startup-time", action="store_true", help="print the time to the window's first paint")
    parser.add_argument("--version", action="version", version=_version())
    args = parser.parse_args(argv)
    from trinity_desktop import app

    if args.startup_time:
        return app.startup_time(START)
    if args.present_to:
        if not args.file:
            parser.error("--present-to needs a deck FILE")
        return app.present_slides(args.file, args.present_to)
    if args.screenshot:
        return app.screenshot(args.screenshot, args.scale, args.file)
    return app.run(args.file)


def _version() -> str:
    from trinity_desktop import __version__

    return f"trinity-desktop {__version__}"


if __name__ == "__main__":
    sys.exit(main())
