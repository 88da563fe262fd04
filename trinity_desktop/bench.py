"""`trinity-desktop bench [--json]`: how fast the app is on this machine, each figure against its baseline.

The machine a user runs this on may be shared and noisy, so what counts is each ratio, measured in the same
run against a baseline measured the same way:

  start        wall time from spawning the process to the end of the window's first frame, against a bare
               PySide6 + pyqtgraph window (one PlotWidget curve + one ImageView, `bare_window`) spawned the
               same way (`python -m trinity_desktop.bench --child start-app|start-bare`); runs alternate, after
               one uncounted start of each that fills a private bytecode cache (as an installed app has).
  peak RSS     the same children's peak resident set size (getrusage ru_maxrss) at their first paint.
  edit         one store edit, then `processEvents` until no widget paints again (`settle`), against the
               bare window's `setData` + `setImage` settled the same way; the two alternate edit by edit,
               in one child process (`--child edit`) holding both windows. p50 and p95 of each.
  evaluate     configurations per second of scalar `evaluate` over distinct training layouts, against
               llm-analysis's per-configuration analysis when that package is installed (its pip name is
               `llm-analysis`; without it the baseline is reported as absent, never invented).
  grid         configurations per second of one `evaluate_grid` call over ~1e6 layouts, against scalar
               `evaluate` (how much the vectorized path buys).

The same measurements run under pytest-benchmark in tests/benchmarks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

# --- the bare baseline window ---------------------------------------------------------------------------

BARE_CURVE_POINTS = 97      # as many points as the roofline's decode sweep (model.roofline.batch_values)
BARE_IMAGE_SHAPE = (64, 64)
WINDOW_SIZE = (1600, 1000)  # the app's default size (main_window.DEFAULT_SIZE)


def bare_window():
    """The baseline: a plain QMainWindow holding one pyqtgraph PlotWidget curve and one ImageView, the app's
    window size, filled once with data."""
    import pyqtgraph as pg
    from PySide6 import QtWidgets

    window = QtWidgets.QMainWindow()
    window.setWindowTitle("bare PySide6 + pyqtgraph window")
    window.resize(*WINDOW_SIZE)
    splitter = QtWidgets.QSplitter()
    plot = pg.PlotWidget()
    window.curve = plot.plot()
    window.image = pg.ImageView()
    splitter.addWidget(plot)
    splitter.addWidget(window.image)
    window.setCentralWidget(splitter)
    window.rng = np.random.default_rng(0)
    bare_update(window)
    return window


def bare_update(window) -> None:
    """The baseline's 'edit': new data into the curve (setData) and the image (setImage)."""
    x = np.arange(BARE_CURVE_POINTS, dtype=float)
    window.curve.setData(x, window.rng.random(BARE_CURVE_POINTS))
    window.image.setImage(window.rng.random(BARE_IMAGE_SHAPE), autoLevels=False, levels=(0.0, 1.0))


# --- counting paints ------------------------------------------------------------------------------------

class PaintCounter:
    """An application-wide event filter that counts paint events, in all and per top-level window and per
    widget (`by_widget`, for finding views that paint more than once per edit)."""

    def __init__(self, app):
        from PySide6 import QtCore

        class _Filter(QtCore.QObject):
            def eventFilter(inner, obj, event):  # noqa: N802, N805 (Qt name; `inner` is the filter)
                if event.type() == QtCore.QEvent.Type.Paint:
                    self.total += 1
                    if self.by_widget is not None:
                        self.by_widget[obj] = self.by_widget.get(obj, 0) + 1
                return False

        self.total = 0
        self.by_widget: dict | None = None
        self._filter = _Filter()
        app.installEventFilter(self._filter)

    def remove(self, app) -> None:
        app.removeEventFilter(self._filter)


def settle(app, counter: PaintCounter, max_passes: int = 200) -> float:
    """Process events until two passes in a row paint nothing; the seconds from the call to the end of the
    last pass that painted (0 if nothing painted)."""
    t0 = time.perf_counter()
    last = t0
    quiet = passes = 0
    while quiet < 2 and passes < max_passes:
        before = counter.total
        app.processEvents()
        passes += 1
        if counter.total != before:
            last, quiet = time.perf_counter(), 0
        else:
            quiet += 1
    return last - t0


def timed(app, counter: PaintCounter, action: Callable[[], object]) -> float:
    """Seconds from starting `action` to the end of the last paint it caused (events settled first)."""
    settle(app, counter)
    t0 = time.perf_counter()
    action()
    mid = time.perf_counter()
    return (mid - t0) + settle(app, counter)


# The edits a speaker makes while dragging: sequence length up and down (every panel redraws).
EDIT_SEQUENCE = (4096, 6144, 8192, 12288, 16384, 12288, 8192, 6144)


def app_edit(window, i: int) -> Callable[[], object]:
    return lambda: window.store.edit("bench edit", seq_len=EDIT_SEQUENCE[i % len(EDIT_SEQUENCE)])


def edit_samples(app, window, bare, count: int) -> tuple[list[float], list[float]]:
    """(app seconds, bare seconds) of `count` edits each, alternating app and bare edit by edit."""
    counter = PaintCounter(app)
    try:
        app_times, bare_times = [], []
        for i in range(count):
            app_times.append(timed(app, counter, app_edit(window, i)))
            bare_times.append(timed(app, counter, lambda: bare_update(bare)))
        return app_times, bare_times
    finally:
        counter.remove(app)


# --- child processes ------------------------------------------------------------------------------------

def _peak_rss_bytes() -> int:
    import resource

    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return int(kb if sys.platform == "darwin" else kb * 1024)


def _child_start(kind: str) -> dict:
    """Build and show the app's main window ("app"; "welcome": with the first-run page over it, as a first
    start shows it) or the bare window; report the wall clock at its first paint and the peak RSS then."""
    from PySide6 import QtCore

    if kind in ("app", "welcome"):
        from trinity_desktop.app import build_window, ensure_application

        os.environ.pop("TRINITY_FIRST_RUN", None)
        if kind == "welcome":
            os.environ["TRINITY_FIRST_RUN"] = "1"   # welcome.Welcome shows the page with the window

        app = ensure_application()
        app.setProperty("trinity_quiet", True)
        window = build_window(settings=None)
    else:
        from PySide6 import QtWidgets

        app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([sys.argv[0]])
        window = bare_window()
    seen: dict = {}

    class _FirstPaint(QtCore.QObject):
        def eventFilter(self, obj, event):  # noqa: N802 (Qt name)
            if event.type() == QtCore.QEvent.Type.Paint and not seen:
                seen["painting"] = True
                QtCore.QTimer.singleShot(0, frame_done)  # after every widget of this first frame painted
            return False

    def frame_done():
        seen.update(wall=time.time(), rss=_peak_rss_bytes())
        app.quit()

    probe = _FirstPaint()
    app.installEventFilter(probe)  # the first paint of any widget of the window
    window.show()
    QtCore.QTimer.singleShot(60_000, app.quit)
    app.exec()
    if kind != "bare":
        from trinity_desktop.app import tear_down

        tear_down(window)
    return {"first_paint_wall": seen.get("wall"), "peak_rss_bytes": seen.get("rss")}


def _child_edit(count: int) -> dict:
    from trinity_desktop.app import build_window, ensure_application

    app = ensure_application()
    app.setProperty("trinity_quiet", True)
    window = build_window(settings=None)
    bare = bare_window()
    window.show()
    bare.show()
    counter = PaintCounter(app)
    for _ in range(20):  # the layout settles (timers after show) before the first edit
        settle(app, counter)
    counter.remove(app)
    for i in range(3):  # warm-up: first-use caches (fonts, glyphs) fill on both sides
        edit_samples(app, window, bare, 1)
        app_edit(window, i)
    app_times, bare_times = edit_samples(app, window, bare, count)
    return {"app_s": app_times, "bare_s": bare_times}


def _run_child(args: Sequence[str], timeout: float = 120.0, pycache: str | None = None) -> tuple[float, dict]:
    """(wall time at spawn, the JSON the child printed last). With `pycache`, the child reads and writes its
    bytecode there (as an installed app has its bytecode), whatever PYTHONDONTWRITEBYTECODE says."""
    env = dict(os.environ)
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    for attempt in (1, 2):  # a shared machine can starve a child; one more try before giving up
        t0 = time.time()
        proc = subprocess.run([sys.executable, "-m", "trinity_desktop.bench", "--child", *args],
                              capture_output=True, text=True, timeout=timeout, env=env)
        if proc.returncode == 0:
            break
        message = f"bench child {' '.join(args)} exited with {proc.returncode}: {proc.stderr.strip()[-500:]}"
        if attempt == 2:
            raise RuntimeError(message)
        print(f"{message} (retrying once)", file=sys.stderr)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1]
    return t0, json.loads(line)


def start_samples(runs: int) -> dict:
    """Start-to-first-paint seconds and peak RSS of app and bare children, alternating, after one uncounted
    start of each that fills a private bytecode cache (both then start as installed programs do)."""
    import tempfile

    out = {"app_s": [], "bare_s": [], "app_rss": [], "bare_rss": []}
    with tempfile.TemporaryDirectory(prefix="trinity-bench-pycache-") as pycache:
        for kind in ("app", "bare"):
            _run_child([f"start-{kind}"], pycache=pycache)
        for _ in range(runs):
            for kind in ("app", "bare"):
                t0, rep = _run_child([f"start-{kind}"], pycache=pycache)
                if rep["first_paint_wall"] is None:
                    raise RuntimeError(f"the {kind} window was never painted")
                out[f"{kind}_s"].append(rep["first_paint_wall"] - t0)
                out[f"{kind}_rss"].append(rep["peak_rss_bytes"])
    return out


# --- the model core -------------------------------------------------------------------------------------

def scalar_scenarios(n: int = 400) -> list:
    """`n` distinct valid training layouts of the default scenario (TP, PP, micro-batch, sequence length,
    ZeRO stage vary), cycled if there are fewer."""
    from trinity_desktop.defaults import default_scenario
    from trinity_desktop.model import ValidationError

    base = default_scenario()
    out = []
    for tp in (1, 2, 4, 8):
        for pp in (1, 2, 4, 8):
            for zero in (0, 1, 2, 3):
                for mb in (1, 2, 4):
                    for seq in (2048, 4096, 8192):
                        dp = base.gpus // (tp * pp)
                        try:
                            out.append(base.replace(tp=tp, pp=pp, zero=zero, micro_batch=mb, seq_len=seq,
                                                    global_batch=mb * dp * 8))
                        except ValidationError:
                            continue
    return (out * (n // len(out) + 1))[:n]


def _calls_per_s(calls: Sequence[Callable[[], object]]) -> float:
    t0 = time.perf_counter()
    for call in calls:
        call()
    return len(calls) / (time.perf_counter() - t0)


def interleaved_rates(a: Sequence[Callable[[], object]], b: Sequence[Callable[[], object]] | None,
                      rounds: int = 9, chunk: int = 50) -> tuple[float, float | None]:
    """(calls/s of a, calls/s of b): chunks of each alternate for `rounds` rounds, so that both meet the same
    load on a shared machine; each rate is the best round's."""
    best_a, best_b = 0.0, 0.0
    for r in range(rounds):
        i = r * chunk
        best_a = max(best_a, _calls_per_s([a[(i + k) % len(a)] for k in range(chunk)]))
        if b:
            best_b = max(best_b, _calls_per_s([b[(i + k) % len(b)] for k in range(chunk)]))
    return best_a, (best_b if b else None)


def evaluate_calls(scenarios: list) -> list[Callable[[], object]]:
    from trinity_desktop.model import evaluate

    return [lambda sc=sc: evaluate(sc) for sc in scenarios]


GRID_AXES = dict(tp=[1, 2, 4, 8], pp=[1, 2, 4, 8], zero=[0, 1, 2, 3], recompute=[0, 1, 2],
                 micro_batch=[1, 2, 4, 8], seq_len=[1024, 2048, 4096, 8192], gpus=[8, 16, 32, 64, 128, 256, 512],
                 cp=[1, 2, 4], sp=[False, True], flash=[False, True], global_batch=[256, 512, 1024, 2048])


def grid_axes() -> dict:
    """The ~1e6-configuration training grid (the outer product of GRID_AXES), as broadcastable arrays."""
    names = list(GRID_AXES)
    shape = [len(GRID_AXES[n]) for n in names]
    out = {}
    for i, n in enumerate(names):
        view = [1] * len(names)
        view[i] = shape[i]
        out[n] = np.asarray(GRID_AXES[n]).reshape(view)
    return out


def grid_size() -> int:
    return int(np.prod([len(v) for v in GRID_AXES.values()]))


def grid_evaluate_rate(repeats: int = 3) -> float:
    from trinity_desktop.defaults import default_scenario
    from trinity_desktop.model import evaluate_grid

    base, axes = default_scenario(), grid_axes()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        evaluate_grid(base, **axes)
        best = min(best, time.perf_counter() - t0)
    return grid_size() / best


def llm_analysis_calls() -> list[Callable[[], object]] | None:
    """llm-analysis's per-configuration analysis (one `LLMAnalysis(...).training(...)` per layout, the way its
    own sweeps call it) on Llama-2-70B and H100-SXM, 64 GPUs, ZeRO-1, over the layouts it accepts; None when
    the package is not installed."""
    import logging

    try:
        from llm_analysis.analysis import DSZeRO, LLMAnalysis
        from llm_analysis.config import (
            ParallelismConfig,
            get_dtype_config_by_name,
            get_gpu_config_by_name,
            get_model_config_by_name,
        )
    except ImportError:
        return None
    model = get_model_config_by_name("upstage_Llama-2-70b-instruct-v2")
    gpu = get_gpu_config_by_name("h100-sxm-80gb")
    dtype = get_dtype_config_by_name("w16a16e16")
    # It logs several lines per configuration (its logger is literally named "__name__"): silenced, so that
    # what is timed is the analysis, not the terminal.
    logging.getLogger("__name__").setLevel(logging.ERROR)

    def analyse(tp, pp, mb):
        parallel = ParallelismConfig(tp_size=tp, pp_size=pp, dp_size=64 // (tp * pp))
        return LLMAnalysis(model, gpu, dtype, parallel).training(
            batch_size_per_gpu=mb, seq_len=4096, gradient_accumulation_steps=4, ds_zero=DSZeRO.STAGE_1)

    calls = []
    for layout in ((tp, pp, mb) for tp in (1, 2, 4, 8) for pp in (1, 2, 4, 8) for mb in (1, 2, 4)):
        try:
            analyse(*layout)
        except AssertionError:  # llm-analysis refuses layouts that do not fit in memory
            continue
        calls.append(lambda layout=layout: analyse(*layout))
    return calls


# --- the report -----------------------------------------------------------------------------------------

def _pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=float), q))


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def measure(start_runs: int = 5, edits: int = 40) -> dict:
    """Every figure of the module docstring, with its baseline and the ratio app / baseline."""
    starts = start_samples(start_runs)
    _, edit = _run_child(["edit", str(edits)], timeout=600.0)
    scalar, llm = interleaved_rates(evaluate_calls(scalar_scenarios()), llm_analysis_calls())
    grid = grid_evaluate_rate()
    app_start, bare_start = _pct(starts["app_s"], 50), _pct(starts["bare_s"], 50)
    app_rss, bare_rss = _pct(starts["app_rss"], 50), _pct(starts["bare_rss"], 50)
    e = {f"{side}_{q}": _pct(edit[f"{side}_s"], q) for side in ("app", "bare") for q in (50, 95)}
    return {
        "start_to_first_paint_s": {"app": app_start, "bare": bare_start, "ratio": app_start / bare_start,
                                   "runs": start_runs},
        "peak_rss_at_first_paint_bytes": {"app": app_rss, "bare": bare_rss, "ratio": app_rss / bare_rss},
        "edit_to_repaint_s": {"app_p50": e["app_50"], "app_p95": e["app_95"], "bare_p50": e["bare_50"],
                              "bare_p95": e["bare_95"], "ratio_p50": e["app_50"] / e["bare_50"],
                              "ratio_p95": e["app_95"] / e["bare_95"], "edits": edits},
        "scalar_evaluate_configs_per_s": {"app": scalar, "llm_analysis": llm, "ratio": _ratio(scalar, llm),
                                          "app_ms_per_config": 1e3 / scalar,
                                          "llm_analysis_ms_per_config": 1e3 / llm if llm else None},
        "grid_evaluate_configs_per_s": {"app": grid, "configs": grid_size(), "scalar_evaluate": scalar,
                                        "ratio": grid / scalar},
        "platform": os.environ.get("QT_QPA_PLATFORM", "default"),
    }


def text_report(rep: dict) -> str:
    s, r, e = rep["start_to_first_paint_s"], rep["peak_rss_at_first_paint_bytes"], rep["edit_to_repaint_s"]
    c, g = rep["scalar_evaluate_configs_per_s"], rep["grid_evaluate_configs_per_s"]
    llm = (f"llm-analysis {c['llm_analysis']:,.0f}/s ({c['llm_analysis_ms_per_config']:.3f} ms)  ratio "
           f"{c['ratio']:.2f}x" if c["llm_analysis"] else "llm-analysis not installed (pip install llm-analysis)")
    return "\n".join([
        "figure                     app          baseline (bare window / llm-analysis / scalar)   app / baseline",
        f"start to first paint  {s['app'] * 1e3:8.0f} ms   {s['bare'] * 1e3:8.0f} ms   {s['ratio']:.2f}x"
        f"   (median of {s['runs']})",
        f"peak RSS at paint     {r['app'] / 2**20:8.0f} MiB  {r['bare'] / 2**20:8.0f} MiB  {r['ratio']:.2f}x",
        f"edit -> repaint p50   {e['app_p50'] * 1e3:8.1f} ms   {e['bare_p50'] * 1e3:8.1f} ms   {e['ratio_p50']:.2f}x",
        f"edit -> repaint p95   {e['app_p95'] * 1e3:8.1f} ms   {e['bare_p95'] * 1e3:8.1f} ms   {e['ratio_p95']:.2f}x"
        f"   ({e['edits']} edits each, alternating)",
        f"scalar evaluate       {c['app']:8,.0f}/s ({c['app_ms_per_config']:.3f} ms)   {llm}",
        f"evaluate_grid         {g['app']:8,.0f}/s over {g['configs']:,} configurations   "
        f"{g['ratio']:.0f}x scalar evaluate",
    ])


def run_bench(as_json: bool, start_runs: int = 5, edits: int = 40) -> int:
    rep = measure(start_runs, edits)
    print(json.dumps(rep, indent=2) if as_json else text_report(rep))
    return 0


def _child_main(argv: Sequence[str]) -> int:
    kind = argv[0]
    if kind.startswith("start-"):
        rep = _child_start(kind.removeprefix("start-"))
    elif kind == "edit":
        rep = _child_edit(int(argv[1]))
    elif kind == "welcome-cost":
        from trinity_desktop.bench_welcome import child_welcome_cost

        rep = child_welcome_cost()
    else:
        raise SystemExit(f"unknown bench child {kind!r}")
    print(json.dumps(rep))
    return 0


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[1] == "--child":
    sys.exit(_child_main(sys.argv[2:]))
