"""`groupspec assignors`: the scenario table, its JSON form, and its exit codes."""

from __future__ import annotations

import json

import pytest

import groupspec.cli.assignors_command as command
from groupspec.cli.main import main
from groupspec.oracle.assignor.adapter import CallableAssignor
from groupspec.oracle.assignor.assignor_scenarios import SCENARIO_NAMES
from groupspec.oracle.assignor.kafka_python import KafkaPythonMissingError, kafka_python_available
from groupspec.spec.assignors.registry import ASSIGNORS

OURS = ("range", "roundrobin", "sticky", "cooperative-sticky")
THEIRS = tuple(f"kafka-python:{name}" for name in OURS)
needs_kafka_python = pytest.mark.skipif(
    not kafka_python_available(), reason="kafka-python is not installed"
)


@pytest.fixture(scope="module")
def full_json() -> dict:
    """One run of the whole suite as JSON, shared by the tests that read it."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["assignors", "--json", "-"])
    assert code == 0
    return json.loads(out.getvalue())


@needs_kafka_python
def test_table_has_every_scenario_and_all_eight_assignors(capsys):
    assert main(["assignors"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == [
        "scenario",
        "assignor",
        "protocol",
        "rounds",
        "spread",
        "balanced",
        "moves",
        "optimal",
        "gap",
        "violations",
    ]
    rows = [line.split() for line in lines[1:] if line and not line.startswith(" ")]
    rows = [row for row in rows if row[0] in SCENARIO_NAMES]
    assert {(row[0], row[1]) for row in rows} == {
        (scenario, assignor) for scenario in SCENARIO_NAMES for assignor in OURS + THEIRS
    }
    assert len(rows) == len(SCENARIO_NAMES) * 8
    # columns line up: every row is as wide as the header or narrower (trailing cells right-aligned)
    widths = {len(line) for line in lines[1 : 1 + 8]}
    assert widths == {len(lines[0])}
    assert "finding uneven-subscriptions / kafka-python:roundrobin" in out


@needs_kafka_python
def test_json_parses_and_our_assignors_have_no_violations(full_json):
    assert full_json["verdict"] == "pass"
    assert full_json["scenarios"] == list(SCENARIO_NAMES)
    assert full_json["assignors"] == list(OURS + THEIRS)
    results = full_json["results"]
    assert len(results) == len(SCENARIO_NAMES) * 8
    for result in results:
        assert set(result) >= {
            "scenario",
            "assignor",
            "protocol",
            "rounds",
            "spread",
            "balanced",
            "moves",
            "optimal_moves",
            "gap",
            "violations",
        }
        if result["ours"]:
            assert result["violations"] == [], result
            assert result["converged"]
            assert result["gap"] is not None
        if result["assignor"] in ("sticky", "cooperative-sticky"):
            assert result["balanced"] is True and result["gap"] >= 0


@needs_kafka_python
def test_third_party_findings_are_reported_not_failures(full_json):
    theirs = [r for r in full_json["results"] if not r["ours"] and r["violations"]]
    assert [(r["scenario"], r["assignor"]) for r in theirs] == [
        ("uneven-subscriptions", "kafka-python:roundrobin")
    ]
    assert theirs[0]["violations"][0]["property"] == "AssignorRaised"
    assert theirs[0]["moves"] is None and theirs[0]["assignment"] is None


def test_unknown_scenario_exits_2_naming_the_valid_ones(capsys):
    assert main(["assignors", "--scenario", "start-up", "--scenario", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown scenario 'nope'" in err
    for name in SCENARIO_NAMES:
        assert name in err


def test_bad_flags_are_usage_errors(capsys):
    assert main(["assignors", "--no-third-party", "--require-third-party"]) == 2
    assert main(["assignors", "--bogus"]) == 2


def test_one_scenario_ours_only(capsys):
    argv = ["assignors", "--no-third-party", "--scenario", "scale-out", "--json", "-"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["scenarios"] == ["scale-out"]
    assert data["assignors"] == list(OURS)
    moves = {r["assignor"]: (r["moves"], r["optimal_moves"]) for r in data["results"]}
    assert moves["sticky"] == (4, 4) and moves["cooperative-sticky"] == (4, 4)


def _no_kafka_python() -> tuple:
    raise KafkaPythonMissingError(
        "kafka-python is not installed; install it to compare its assignors: pip install kafka-python"
    )


def test_missing_kafka_python_is_a_note_unless_required(monkeypatch, capsys):
    monkeypatch.setattr(command, "kafka_python_assignors", _no_kafka_python)
    assert main(["assignors", "--scenario", "start-up"]) == 0
    captured = capsys.readouterr()
    assert "note: kafka-python is not installed" in captured.err
    assert "pip install kafka-python" in captured.err
    assert "kafka-python:" not in captured.out
    assert main(["assignors", "--scenario", "start-up", "--require-third-party"]) == 2
    assert "pip install kafka-python" in capsys.readouterr().err


def test_a_violation_by_one_of_ours_exits_1(monkeypatch, capsys):
    def everything_to_the_first(members: dict, counts: dict) -> dict:
        first = next(iter(members))
        return {first: [(t, n) for t, c in counts.items() for n in range(c)]}

    broken = CallableAssignor("range", everything_to_the_first)
    monkeypatch.setattr(command, "ASSIGNORS", {**ASSIGNORS, "range": broken})
    assert main(["assignors", "--no-third-party", "--scenario", "scale-out"]) == 1
    out = capsys.readouterr().out
    assert "VIOLATION scale-out / range" in out and "RangeBalance" in out
