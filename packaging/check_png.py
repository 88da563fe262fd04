"""Check that a screenshot is a real window: a PNG at least MIN_WIDTH x MIN_HEIGHT (the release workflow's smoke
tests use it on each OS after running the installed app with --screenshot).

    python packaging/check_png.py shot.png
"""

import struct
import sys
from pathlib import Path

MIN_WIDTH, MIN_HEIGHT = 1200, 800  # as tests/e2e/test_real_window.py
SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    if head[:8] != SIGNATURE or head[12:16] != b"IHDR":
        raise ValueError(f"{path}: not a PNG file")
    return struct.unpack(">II", head[16:24])


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    width, height = png_size(Path(argv[0]))
    print(f"{argv[0]}: {width}x{height}")
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        print(f"error: smaller than {MIN_WIDTH}x{MIN_HEIGHT}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
