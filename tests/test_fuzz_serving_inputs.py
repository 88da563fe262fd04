"""Fuzzers for the inputs the first fuzzers did not reach (issue 26, "Fuzzing"): the serving flags of `calc infer`
and `plan infer` (EP, DP-attention, draft model, MTP, pools, load, cost, LoRA), `calc retrieval` and `calc split`;
Hugging Face config.json mutations through `--model-file`; sessions whose scenario carries the serving fields with
wild values. Seeded (derandomized) and bounded like tests/test_fuzz_inputs.py. Each input ends in exit 0 or 2 with
one line of at most 200 characters (the path of a file aside), no traceback, no NaN or infinity printed, and a
session that loads saves and loads back unchanged.

Regression tests from the independent pass's reproducers close the file.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import random
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from test_fuzz_inputs import fuzz

from trinity_desktop import session_file
from trinity_desktop.model import ValidationError, evaluate
from trinity_desktop.model.inputs.presets import load_hardware_file
from trinity_desktop.session_file import SessionFileError

MAX_LINE = 200
NON_FINITE = re.compile(r"\b(nan|inf|infinity)\b", re.IGNORECASE)
ROOT = Path(__file__).resolve().parents[1]


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    from trinity_desktop.__main__ import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    return code, out.getvalue(), err.getvalue()


def assert_clean(argv: list[str], code: int, out: str, err: str, path: str = "") -> None:
    assert code in (0, 2), (argv, code, err[-800:])
    assert "Traceback" not in err, (argv, err[-1500:])
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1, (argv, err[:800])
        assert len(lines[0].replace(path, "")) <= MAX_LINE, (argv, lines[0])
    else:
        assert not NON_FINITE.search(out), (argv, [s for s in out.splitlines() if NON_FINITE.search(s)][:3])


# --- serving flags, retrieval and split ------------------------------------------------------------------------

NUMBERS = ["0", "1", "2", "3", "8", "16", "64", "-1", "0.5", "1.5", "1e-9", "1e18", "1e309", "nan", "inf", "",
           "99999999999999999999999", "0x10"]
NAMES = ["llama-3.2-1b", "deepseek-v3", "nope", "x" * 250, "a\nb", "fp9", "nvlink", "nic"]
SERVING = ["--inference-ep", "--attention-dp", "--redundant-experts", "--draft-model", "--mtp", "--draft-tokens",
           "--acceptance", "--prefill-gpus", "--decode-gpus", "--prefill-tp", "--prefill-pp", "--decode-tp",
           "--decode-pp", "--kv-transfer-link", "--rate", "--ttft-slo", "--tpot-slo", "--prefill-chunk-tokens",
           "--gpu-hour-price", "--weight-dtype", "--batch", "--prompt-len", "--gen-len", "--gpus"]
SERVING_FLAGS = ["--kv-transfer-layerwise", "--moe-fp8-dispatch", "--json"]
TRAIN_LORA = ["--lora-rank", "--lora-targets", "--gpu-hour-price", "--gpus", "--micro-batch", "--global-batch"]
RETRIEVAL = ["--vectors", "--dim", "--index", "--dtype", "--m-links", "--ef-search", "--hardware"]
SPLIT = ["--model", "--device", "--network", "--objective"]
COMMANDS = {
    ("calc", "infer"): (["--model", "deepseek-v3", "--hardware", "h200-sxm", "--gpus", "16"], SERVING,
                        SERVING_FLAGS),
    ("plan", "infer"): (["--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "8"],
                        ["--rate", "--ttft-slo", "--tpot-slo", "--max-batch", "--gpu-hour-price", "--gpus"], ["--json"]),
    ("calc", "train"): (["--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "8"], TRAIN_LORA,
                        ["--qlora", "--json"]),
    ("calc", "retrieval"): (["--vectors", "1e8", "--dim", "768", "--index", "hnsw", "--hardware", "h100-sxm"],
                            RETRIEVAL, ["--json"]),
    ("calc", "split"): (["--model", "llama-3-8b", "--device", "m4-max", "--network", "5g"], SPLIT, ["--json"]),
}


@st.composite
def serving_argvs(draw) -> list[str]:
    command = draw(st.sampled_from(sorted(COMMANDS)))
    base, options, flags = COMMANDS[command]
    argv = [*command, *base]
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.integers(0, 4)) == 0:
            argv.append(draw(st.sampled_from(flags)))
        else:
            argv += [draw(st.sampled_from(options)), draw(st.sampled_from(NUMBERS + NAMES))]
    return argv


SERVING_CASES = 20
cases_run = {"serving argv": 0, "config.json": 0, "serving sessions": 0}


@fuzz(SERVING_CASES)
@given(serving_argvs())
def test_serving_retrieval_and_split_argv_exit_0_or_2_in_one_short_line(argv):
    cases_run["serving argv"] += 1
    assert_clean(argv, *run_cli(argv))


# --- Hugging Face config.json mutations -------------------------------------------------------------------------

CONFIGS = ROOT / "tests" / "model" / "hf_configs"
WILD = [None, True, 0, -1, 1, 3, 2 ** 31, 2 ** 63, 10 ** 400, 1.5, 1e308, "", "x" * 300, "\ud800", [], {},
        [1, 2], "llama", 65536, 1 << 24]
EXTRA_FIELDS = ["head_dim", "sliding_window", "layer_types", "num_experts", "text_config", "q_lora_rank",
                "n_shared_experts", "first_k_dense_replace", "use_sliding_window", "moe_layer_freq"]


@st.composite
def mutated_configs(draw) -> dict:
    folder = draw(st.sampled_from(sorted(p.name for p in CONFIGS.iterdir())))
    doc = json.loads((CONFIGS / folder / "config.json").read_text(encoding="utf-8"))
    rng = random.Random(draw(st.integers(0, 2 ** 32 - 1)))
    for _ in range(draw(st.integers(1, 3))):
        key = rng.choice(sorted(doc) + EXTRA_FIELDS)
        roll = rng.random()
        if roll < 0.2:
            doc.pop(key, None)
        elif roll < 0.4 and isinstance(doc.get(key), int) and not isinstance(doc.get(key), bool):
            doc[key] = doc[key] * rng.choice([2, 3, 7, 1000, 10 ** 6]) + rng.choice([0, 1, -1])
        else:
            doc[key] = copy.deepcopy(rng.choice(WILD))
    return doc


CONFIG_CASES = 20


@fuzz(CONFIG_CASES)
@given(mutated_configs(), st.sampled_from([
    ["calc", "infer", "--hardware", "h100-sxm", "--gpus", "8"],
    ["calc", "train", "--hardware", "h100-sxm", "--gpus", "8", "--lora-rank", "16", "--qlora"],
    ["calc", "infer", "--hardware", "h200-sxm", "--gpus", "8", "--mtp", "1"],
]))
def test_mutated_config_json_runs_or_is_refused_in_one_short_line(tmp_path_factory, doc, command):
    cases_run["config.json"] += 1
    path = tmp_path_factory.mktemp("hf") / "config.json"
    try:
        path.write_text(json.dumps(doc), encoding="utf-8", errors="surrogatepass")
    except ValueError:
        return
    argv = [*command, "--model-file", str(path)]
    assert_clean(argv, *run_cli(argv), path=str(path))


# --- sessions carrying the serving fields ----------------------------------------------------------------------

SERVING_DECK = json.loads((ROOT / "resources" / "decks" / "serving.json").read_text(encoding="utf-8"))
FIELD_VALUES = {
    "inference_ep": [1, 2, 8, 16, 64, 0, 3], "attention_dp": [1, 2, 8, 16, 0, 3], "redundant_experts": [0, 32, -1],
    "draft_model": ["", "llama-3.2-1b", "nope", "deepseek-v3", 5], "mtp_depth": [0, 1, 2, 9, -1],
    "draft_tokens": [0, 1, 4, 100, -1], "acceptance": [0.0, 0.5, 1.0, 1.5, -0.1, "nan"],
    "prefill_gpus": [0, 8, 16, 3, 10 ** 15], "decode_gpus": [0, 8, 16, 5], "prefill_tp": [1, 8, 3, 0],
    "decode_tp": [1, 8, 16, 0], "kv_transfer_link": ["nvlink", "nic", "", "x"], "kv_transfer_layerwise": [True, 1],
    "request_rate": [0.0, 1.0, 1e6, -1.0, 1e300], "ttft_slo_s": [0.0, 1e-9, 0.1, 1e9], "tpot_slo_s": [0.0, 0.03],
    "prefill_chunk_tokens": [0, 512, 1 << 24, -5], "gpu_hour_price": [0.0, 2.5, 1e12, -1, 1e308],
    "lora_rank": [0, 16, 1 << 20, -1], "lora_targets": ["all", "attn", "", "q"], "qlora": [True, False],
    "attention_kernel": ["", "fa2", "x"], "gpus": [1, 8, 16, 72, 0, 3], "batch": [1, 1024, 0, 10 ** 9],
    "kind": ["decode", "prefill", "train", "serve"], "weight_dtype": ["fp8", "fp4", "int4", "x"],
}


@st.composite
def serving_sessions(draw) -> str:
    doc = copy.deepcopy(SERVING_DECK)
    for _ in range(draw(st.integers(1, 4))):
        field = draw(st.sampled_from(sorted(FIELD_VALUES)))
        doc["scenario"][field] = draw(st.sampled_from(FIELD_VALUES[field] + [None, [], {}, "x" * 300]))
    return json.dumps(doc)


SESSION_CASES = 40


@fuzz(SESSION_CASES)
@given(serving_sessions())
def test_a_serving_session_loads_evaluates_and_saves_back_or_is_refused_in_one_line(text):
    cases_run["serving sessions"] += 1
    try:
        scenario, deck = session_file.loads(text)
    except SessionFileError as exc:
        assert "\n" not in str(exc) and len(str(exc)) <= MAX_LINE, str(exc)[:400]
        return
    try:
        results = evaluate(scenario)
    except ValidationError as exc:  # a combination the model refuses: one line, named
        assert "\n" not in str(exc) and len(str(exc)) <= MAX_LINE, str(exc)[:400]
    else:
        assert math.isfinite(results.time_total) and results.time_total > 0
    again, _ = session_file.loads(session_file.dumps(scenario, deck))
    assert again == scenario   # no lost save: what loads saves back as it was


def test_fuzz_case_counts(capsys):
    """Runs last in the file: the counts go to the note (`-s` shows them)."""
    with capsys.disabled():
        print("\nserving fuzz cases: " + ", ".join(f"{k} {v}" for k, v in cases_run.items()))


# --- regression tests from the independent pass ------------------------------------------------------------------

def test_an_unknown_split_model_names_the_nearest_profiles_on_one_short_line():
    """`calc split --model all` listed all 22 layer profiles: 365 characters."""
    code, _out, err = run_cli(["calc", "split", "--model", "all", "--device", "m4-max", "--network", "5g"])
    assert code == 2 and err.count("\n") == 1 and len(err.strip()) <= MAX_LINE
    assert "is not a layer profile" in err and "trinity-desktop presets" in err
    code, _out, err = run_cli(["calc", "split", "--model", "llama3", "--device", "m4-max", "--network", "5g"])
    assert code == 2 and "did you mean llama-3-8b" in err


def test_a_long_list_of_choices_is_not_printed_whole():
    """`--weight-dtype llama-3.2-1b` printed argparse's 18 choices: 250 characters."""
    code, _out, err = run_cli(["calc", "infer", "--model", "llama-3.2-1b", "--hardware", "h100-sxm",
                               "--weight-dtype", "llama-3.2-1b"])
    assert code == 2 and err.count("\n") == 1 and len(err.strip()) <= MAX_LINE
    assert "invalid choice: 'llama-3.2-1b' (18 choices: see --help)" in err
    code, _out, err = run_cli(["calc", "infer", "--model", "llama-3.2-1b", "--hardware", "h100-sxm",
                               "--weight-dtype", "fp9"])
    assert code == 2 and "did you mean fp8" in err
    code, _out, err = run_cli(["calc", "train", "--model", "llama-3.2-1b", "--hardware", "h100-sxm", "--zero", "7"])
    assert code == 2 and "--zero" in err   # a short list stays as argparse or the range guard says it


def test_a_hardware_name_that_is_not_text_is_refused(tmp_path):
    """`name = inf` in a hardware file became the device "inf", printed as "1 x inf" (a NaN-looking report)."""
    text = (ROOT / "resources" / "hardware.toml").read_text(encoding="utf-8").split("[[hardware]]")[2]
    path = tmp_path / "hw.toml"
    for line, value in (("name", "inf"), ("vendor", "5"), ("scaleup_name", "[]")):
        changed = re.sub(rf"(?m)^{line} = .*$", f"{line} = {value}", text, count=1)
        path.write_text("[[hardware]]" + changed, encoding="utf-8")
        try:
            load_hardware_file(path)
        except ValidationError as exc:
            assert f"{line}: must be text" in str(exc)
        else:
            raise AssertionError(f"{line} = {value} was accepted")
        code, out, err = run_cli(["calc", "infer", "--model", "llama-3-8b", "--hardware-file", str(path)])
        assert code == 2 and not out and err.count("\n") == 1


def test_validate_refuses_samples_it_cannot_finish():
    """`validate --samples 65536` ran 65,536 Sobol samples for every published run: many minutes (the fuzzer's
    hang). It is refused at once; `calc --uncertainty` (one scenario) keeps 65,536."""
    code, _out, err = run_cli(["validate", "--samples", "65536"])
    assert code == 2 and "from 16 to 1024" in err and err.count("\n") == 1


def test_an_uneven_stage_refusal_fits_one_short_line():
    """`--first-stage-layers 100` on one GPU stated the whole rule with every number: 230 characters."""
    for extra in (["--gpus", "1", "--first-stage-layers", "100"],
                  ["--gpus", "8", "--pp", "4", "--tp", "2", "--first-stage-layers", "40"]):
        code, _out, err = run_cli(["calc", "train", "--model", "llama-2-7b", "--hardware", "h100-sxm", *extra])
        assert code == 2 and err.count("\n") == 1 and len(err.strip()) <= MAX_LINE, err
        assert "--first-stage-layers" in err and ("PP >= 2" in err or "the other 3 stages" in err)
