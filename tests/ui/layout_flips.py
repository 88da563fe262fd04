"""Run by test_robustness_ui.py in a subprocess (a crash there cannot kill the test run): restore seeded
single-byte flips of the default layout through MainWindow.restore_checked and print how many reached Qt."""

import os
import random
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from trinity_desktop.app import build_window, ensure_application  # noqa: E402
from trinity_desktop.main_window import LAYOUT_VERSION  # noqa: E402

app = ensure_application()
window = build_window()
window.show()
app.processEvents()
base = bytes(window.saveState(LAYOUT_VERSION))
rng = random.Random(int(sys.argv[1]))
restored = refused = 0
for _ in range(int(sys.argv[2])):
    flipped = bytearray(base)
    flipped[rng.randrange(len(base))] ^= 1 << rng.randrange(8)
    if window.restore_checked(bytes(flipped), "flip"):
        restored += 1
    else:
        refused += 1
print(f"restored {restored} refused {refused}", flush=True)
os._exit(0)
