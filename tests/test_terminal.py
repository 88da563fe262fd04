"""Terminal hygiene (issue 26, "Terminal"): without a display the GUI commands say so in one line and exit 2
(Qt aborted with SIGABRT and a six-line message); file names with newlines or control characters are printed
escaped, on one line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _env_without_display() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return env


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux session without a display")
@pytest.mark.parametrize(
    "args",
    [["--screenshot", "out.png"], ["deck.json", "--present-to", "slides"], ["--startup-time"], [], ["bench"]],
    ids=["screenshot", "present-to", "startup-time", "window", "bench"],
)
def test_no_display_is_one_line_and_exit_2(tmp_path, args):
    run = subprocess.run(
        [sys.executable, "-m", "trinity_desktop", *args],
        cwd=tmp_path,
        env=_env_without_display(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2, (run.returncode, run.stderr[-1000:])
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "no display found" in lines[0], run.stderr
    assert not (tmp_path / "out.png").exists()


def test_a_file_name_with_a_newline_and_control_characters_is_printed_escaped(tmp_path):
    name = "bad\nname\x1b[31m.json"
    path = tmp_path / name
    path.write_text("{not json", encoding="utf-8")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    run = subprocess.run(
        [sys.executable, "-m", "trinity_desktop", str(path), "--screenshot", str(tmp_path / "o.png")],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert "bad\\nname\\x1b[31m.json" in lines[0] and "\x1b" not in run.stderr


def _cli(args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "trinity_desktop", *args], capture_output=True, text=True, timeout=120, **kw
    )


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="a closed file descriptor 1 from a POSIX shell"
)
def test_a_closed_stdout_is_one_line_and_exit_2():
    run = subprocess.run(
        [sys.executable, "-m", "trinity_desktop", "presets"],
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.close(1),
    )  # as `>&-`: Python sees sys.stdout None
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "standard output is closed" in run.stderr


def test_an_ascii_only_terminal_gets_escapes_not_an_encoding_error(tmp_path):
    """A model name outside ASCII, printed where stdout is ASCII-only (LANG=C without UTF-8 mode)."""
    text = tmp_path / "m.toml"
    fields = dict(
        layers=32,
        hidden=4096,
        heads=32,
        kv_heads=32,
        head_dim=128,
        ffn_hidden=11008,
        vocab=32000,
        experts=1,
        experts_per_token=1,
        max_seq=4096,
    )
    text.write_text(
        'key = "m"\nname = "Modèle 名前"\n'
        + "".join(f"{k} = {v}\n" for k, v in fields.items())
        + 'gated_mlp = true\ntied_embeddings = false\nattention = "mha"\nnorm = "rmsnorm"\n'
        'linear_bias = false\nposition = "rope"\n',
        encoding="utf-8",
    )
    env = dict(os.environ, PYTHONIOENCODING="ascii", LANG="C", LC_ALL="C", PYTHONUTF8="0")
    run = _cli(
        [
            "calc",
            "train",
            "--model-file",
            str(text),
            "--hardware",
            "h100-sxm",
            "--gpus",
            "8",
            "--global-batch",
            "64",
            "--seq-len",
            "4096",
        ],
        env=env,
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stdout.startswith("Mod\\xe8le \\u540d\\u524d on 8"), run.stdout[:200]


def test_an_empty_command_is_refused_in_one_line():
    run = _cli([""])
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "empty command" in run.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")
@pytest.mark.parametrize(("name", "status"), [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_signal_during_a_command_is_one_line_and_the_shells_status(name, status):
    """SIGTERM or Ctrl+C while a command runs (sent from inside it, so that it arrives mid-run)."""
    code = (
        "import os, signal, time\nfrom trinity_desktop import cli\n"
        f"def slow(argv):\n    os.kill(os.getpid(), signal.{name})\n    time.sleep(5)\n    return 0\n"
        "cli.run_cli = slow\nfrom trinity_desktop.__main__ import main\nraise SystemExit(main(['presets']))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == status, run.stderr
    assert run.stderr.strip() == f"trinity-desktop: stopped by {name}", run.stderr


def test_only_refusals_are_capped_other_stderr_output_passes_unchanged(capsys):
    """stderr is not wrapped: a refusal is one short line (print_refusal), while a multi-line message that is not a
    refusal (a Python warning, Qt's own output) keeps its lines."""
    from trinity_desktop.__main__ import main
    from trinity_desktop.refusals import MAX_LINE, print_refusal

    before = sys.stderr
    assert main(["calc", "train", "--seq-len", "9" * 400]) == 2
    assert sys.stderr is before
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < MAX_LINE and "(400 digits)" in err
    print("first line\nsecond line", file=sys.stderr)
    assert capsys.readouterr().err == "first line\nsecond line\n"
    print_refusal("a\nb.json cannot be read")
    assert capsys.readouterr().err == "trinity-desktop: error: a\\nb.json cannot be read\n"
