"""Random walks over the random-clients worlds (`groupspec simulate`) and their command line."""

from __future__ import annotations

import json

from groupspec.checker.model import Invariant
from groupspec.checker.walk import random_walks
from groupspec.cli.main import main
from groupspec.models.preset_models import load_model, random_clients_preset_names
from groupspec.models.random_clients import ClientsState, RandomClientsWorld


def three_clients() -> RandomClientsWorld:
    model = load_model("three-clients").model
    assert isinstance(model, RandomClientsWorld)
    return model


def test_the_random_clients_worlds_are_presets():
    assert set(random_clients_preset_names()) == {
        "three-clients",
        "max-size-two",
        "write-failures",
        "dynamic-only",
    }
    assert not load_model("three-clients").exhaustive


def test_same_seed_same_walks():
    first = random_walks(three_clients(), seed=7, runs=2, steps=80)
    second = random_walks(three_clients(), seed=7, runs=2, steps=80)
    assert first.rule_counts == second.rule_counts
    assert first.distinct_states == second.distinct_states


def test_walks_reach_stable_groups_and_rebalances():
    report = random_walks(three_clients(), seed=5, runs=8, steps=300)
    assert not report.violations
    for rule in (
        "sync.leader_assignment_stored_group_stable",
        "join.static_replacement.stable_no_rebalance",
        "timer.heartbeat_expired_member_removed",
        "partition.loaded",
    ):
        assert report.rule_counts[rule] > 0, rule


def test_weights_make_faults_rarer_than_the_protocol():
    report = random_walks(three_clients(), seed=5, runs=4, steps=300)
    assert report.action_counts["HandleJoinGroup"] > 5 * report.action_counts["Restart"]


class NeverStable(RandomClientsWorld):
    """A world with a property the protocol breaks: no group is ever Stable."""

    @property
    def properties(self):
        def check(state: ClientsState) -> list[str]:
            return [g.group_id for g in state.coordinator.groups if g.state.value == "Stable"]

        return (*super().properties, Invariant("NeverStable", "no group is Stable", check))


def test_a_broken_invariant_is_reported_with_its_trace():
    world = NeverStable(three_clients().settings)
    report = random_walks(world, seed=3, runs=4, steps=300)
    assert report.violations
    violation = report.violations[0]
    assert violation.property_name == "NeverStable"
    assert violation.trace and violation.trace[-1].startswith("c")


def test_cli_simulate_writes_json_and_exits_zero(tmp_path, capsys):
    out = tmp_path / "result.json"
    code = main(
        [
            *("simulate", "dynamic-only", "--seed", "5", "--runs", "2", "--steps", "60"),
            *("--json", str(out), "--quiet"),
        ]
    )
    assert code == 0
    document = json.loads(out.read_text())
    assert document["verdict"] == "pass"
    assert document["presets"]["dynamic-only"]["steps"] == 120
    assert "coordinator rules fired:" in capsys.readouterr().out


def test_check_refuses_an_unbounded_world(capsys):
    assert main(["check", "three-clients"]) == 2
    assert "walk it with `groupspec simulate three-clients`" in capsys.readouterr().err


def test_cli_rejects_bad_arguments(tmp_path):
    assert main(["simulate", "--runs", "0"]) == 2
    assert main(["simulate", "no-such-world"]) == 2
    assert main(["simulate", "--json", str(tmp_path / "missing-dir" / "out.json")]) == 2
    assert main(["simulate", "--set", "novalue"]) == 2
    assert main(["partition", "g", "--partitions", "0"]) == 2


def test_cli_help_lists_subcommands(capsys):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for command in ("simulate", "rules", "invariants", "partition"):
        assert command in text


def test_cli_partition_matches_java(capsys):
    assert main(["partition", "polygenelubricants"]) == 0
    assert "hashCode=-2147483648\tabs=0\tpartition=0" in capsys.readouterr().out
