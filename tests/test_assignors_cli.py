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


# ---------------------------------------------------------------------------------------------
# --assignor MODULE:ATTRIBUTE, with deliberately broken assignors, and --random N --seed S

_BROKEN_MODULE = """
from groupspec.oracle.assignor.adapter import CallableAssignor
from groupspec.spec.assignment import RebalanceProtocol


def _everything_to_the_first(members, partition_counts):
    first = sorted(members)[0]
    return {first: [(t, p) for t in members[first]["topics"] for p in range(partition_counts[t])]}


def _crash(members, partition_counts):
    raise RuntimeError("deliberately broken")


greedy = CallableAssignor("greedy", _everything_to_the_first, protocol_name="range")


def both():
    return [greedy, CallableAssignor("crashing", _crash, protocol_name="roundrobin")]


def plain(members, partition_counts):
    return {}


def factory_that_raises():
    raise OSError("no config file")


def returns_a_string():
    return "range"


def returns_nothing():
    return []


class Half:
    name = "half"
    supported_protocols = (RebalanceProtocol.EAGER,)

    def assign(self, group):
        return None


not_an_assignor = 42
clashing = CallableAssignor("sticky", _everything_to_the_first)
"""


@pytest.fixture
def broken_module(tmp_path, monkeypatch) -> str:
    """A module on sys.path holding broken assignors and broken references; returns its name."""
    (tmp_path / "broken_assignors.py").write_text(_BROKEN_MODULE)
    (tmp_path / "raises_on_import.py").write_text("raise ImportError('needs a licence key')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "broken_assignors"


def test_a_named_broken_assignor_is_judged_beside_ours(broken_module, capsys):
    code = main(
        [
            "assignors",
            "--no-third-party",
            "--scenario",
            "scale-out",
            "--assignor",
            f"{broken_module}:both",
            "--json",
            "-",
        ]
    )
    assert code == 0  # third-party violations are findings, not failures
    data = json.loads(capsys.readouterr().out)
    assert data["assignors"] == [*OURS, "greedy", "crashing"]
    by_name = {r["assignor"]: r for r in data["results"]}
    assert not by_name["greedy"]["ours"]
    assert {v["property"] for v in by_name["greedy"]["violations"]} == {
        "RangeBalance",
        "RangeOrder",
    }
    assert by_name["greedy"]["spread"] == 18
    crashed = by_name["crashing"]["violations"]
    assert [(v["property"], v["round"]) for v in crashed] == [("AssignorRaised", "before 1")]
    assert "RuntimeError: deliberately broken" in crashed[0]["detail"]


def test_a_named_assignor_object_in_the_table(broken_module, capsys):
    assert main(["assignors", "--no-third-party", "--scenario", "start-up",
                 "--assignor", f"{broken_module}:greedy"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert any(line.split()[:2] == ["start-up", "greedy"] for line in out.splitlines())
    assert "finding start-up / greedy (measured): RangeBalance" in out


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("broken_assignors", "expected MODULE:ATTRIBUTE"),
        ("no_such_module_xyz:thing", "no module named 'no_such_module_xyz'"),
        (
            "raises_on_import:thing",
            "importing raises_on_import raised ImportError: needs a licence key",
        ),
        ("broken_assignors:missing", "broken_assignors has no attribute 'missing'"),
        ("broken_assignors:not_an_assignor", "int is neither an assignor nor a factory"),
        ("broken_assignors:plain", "wrap a plain-data assign function in CallableAssignor"),
        ("broken_assignors:factory_that_raises", "calling it raised OSError: no config file"),
        ("broken_assignors:returns_a_string", "returned a str that is not an assignor"),
        ("broken_assignors:returns_nothing", "the factory returned no assignor"),
        ("broken_assignors:Half", "'half': has no `subscription_user_data` method"),
        ("broken_assignors:clashing", "an assignor named 'sticky' is already in the run"),
    ],
)
def test_a_bad_reference_is_one_line_and_exit_2(broken_module, capsys, reference, message):
    code = main(["assignors", "--no-third-party", "--assignor", reference])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""  # nothing ran
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err
    assert lines[0].startswith(f"groupspec assignors: --assignor {reference!r}: ")
    assert message in lines[0]


def test_random_groups_are_summarised_and_reproducible(capsys):
    args = [
        "assignors",
        "--no-third-party",
        "--scenario",
        "start-up",
        "--random",
        "2",
        "--seed",
        "11",
    ]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert "random groups: 2 (seeds 11…12" in first
    summary = first[first.index("random groups:") :].splitlines()
    rows = {line.split()[0]: line.split() for line in summary[2:] if line.strip()}
    for name in OURS:
        assert rows[name][1:4] == ["2", "0", "0"], rows[name]  # groups, violating, crashed
    assert main(args) == 0
    assert capsys.readouterr().out == first


def test_random_json_names_each_group_by_its_seed(capsys):
    assert main(["assignors", "--no-third-party", "--scenario", "start-up",
                 "--random", "2", "--seed", "5", "--json", "-"]) == 0  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert data["scenarios"] == ["start-up", "random-5", "random-6"]


def test_negative_random_is_a_usage_error(capsys):
    assert main(["assignors", "--random", "-1"]) == 2
    assert "--random must be ≥ 0, got -1" in capsys.readouterr().err


def test_the_clients_own_warnings_stay_out_of_the_output(capsys, caplog):
    # Random group 25 makes two aiokafka members claim one partition, which aiokafka logs as a
    # warning (on stderr, outside pytest). The command keeps the clients' loggers at ERROR.
    reference = "groupspec.oracle.assignor.aiokafka_assignors:aiokafka_assignors"
    args = ["assignors", "--no-third-party", "--scenario", "start-up", "--random", "1"]
    assert main([*args, "--seed", "25", "--assignor", reference]) == 0
    assert "StickyRetentionOptimal ×1" in capsys.readouterr().out
    assert [r.getMessage() for r in caplog.records if r.name.startswith("aiokafka")] == []
