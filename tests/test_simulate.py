"""The seeded simulation and its command line."""

from __future__ import annotations

import json

from groupspec.cli.main import main
from groupspec.models.random_clients import PRESET_WORLDS, RandomClientsWorld
from groupspec.models.random_simulation import simulate
from groupspec.spec.invariants import Invariant


def test_same_seed_same_walks():
    world = RandomClientsWorld(PRESET_WORLDS["three-clients"])
    first = simulate(world, seed=7, runs=2, steps=80)
    second = simulate(world, seed=7, runs=2, steps=80)
    assert first.rules_fired == second.rules_fired
    assert first.distinct_states == second.distinct_states


def test_simulation_reaches_stable_groups_and_rebalances():
    world = RandomClientsWorld(PRESET_WORLDS["three-clients"])
    report = simulate(world, seed=3, runs=4, steps=300)
    assert not report.violations
    for rule in (
        "sync.leader_assignment_stored_group_stable",
        "join.static_replacement.stable_no_rebalance",
        "timer.heartbeat_expired_member_removed",
        "partition.loaded",
    ):
        assert report.rules_fired[rule] > 0, rule


def test_a_broken_invariant_is_reported_with_its_trace(monkeypatch):
    import groupspec.models.random_simulation as simulate_module

    never_stable = Invariant(
        "NeverStable",
        "test-only",
        lambda s: [g.group_id for g in s.groups if g.state.value == "Stable"],
    )
    monkeypatch.setattr(
        simulate_module,
        "check_state",
        lambda state: [(never_stable.name, p) for p in never_stable.check(state)],
    )
    report = simulate(RandomClientsWorld(PRESET_WORLDS["three-clients"]), seed=3, runs=4, steps=300)
    assert report.violations
    violation = report.violations[0]
    assert violation.property_name == "NeverStable"
    assert len(violation.trace) == violation.step


def test_cli_simulate_writes_json_and_exits_zero(tmp_path, capsys):
    out = tmp_path / "result.json"
    code = main(
        [
            "simulate",
            "--world",
            "dynamic-only",
            "--runs",
            "2",
            "--steps",
            "50",
            "--quiet",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    result = json.loads(out.read_text())
    assert result["verdict"] == "pass"
    assert result["worlds"]["dynamic-only"]["steps"] == 100
    assert "rules covered" in capsys.readouterr().out


def test_cli_rejects_bad_arguments(tmp_path):
    assert main(["simulate", "--runs", "0"]) == 2
    assert main(["simulate", "--world", "no-such-world"]) == 2
    assert main(["simulate", "--json", str(tmp_path / "missing-dir" / "out.json")]) == 2
    assert main(["partition", "g", "--partitions", "0"]) == 2


def test_cli_help_lists_subcommands(capsys):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for command in ("simulate", "rules", "invariants", "partition"):
        assert command in text


def test_cli_partition_matches_java(capsys):
    assert main(["partition", "polygenelubricants"]) == 0
    assert "hashCode=-2147483648\tabs=0\tpartition=0" in capsys.readouterr().out
