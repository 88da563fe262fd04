import json

from trinity_desktop.cli import run_cli
from trinity_desktop.session_file import dumps, loads


def test_claims_json(capsys):
    assert run_cli(["claims", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = doc["claims"]
    assert len(rows) >= 18
    for row in rows:
        assert {"id", "seed", "text", "claimed", "computed", "unit", "verdict", "scenario", "panel"} <= set(row)
    with_scenario = [r for r in rows if r["scenario"] is not None]
    assert with_scenario
    # the scenario is serialised as a session file's: it loads back
    text = dumps(loads(json.dumps({"trinity_session": 2, "app": "Trinity Desktop", "scenario": with_scenario[0]["scenario"],
                                   "deck": None}))[0])
    assert "weight_dtype" in text


def test_claims_text(capsys):
    assert run_cli(["claims"]) == 0
    out = capsys.readouterr().out
    assert "computed" in out and "trinity-training-skew" in out
