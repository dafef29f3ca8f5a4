"""Counterexamples for people: every step of KAFKA-2555's counterexample shows what it changed
(the group, its members and timers, each client's member id, generation, partitions and
requests, the offsets), `--full` shows whole states, the JSON holds every state as data, the
violating step is marked, and `replay --step N` prints one state."""

import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from groupspec.cli.main import main

CHECK = ["check", "eager-2", "--fault", "KAFKA-2555", "--no-liveness", "--quiet"]


def _run(arguments: list[str]) -> tuple[int, str]:
    printed = io.StringIO()
    with redirect_stdout(printed):
        code = main(arguments)
    return code, printed.getvalue()


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("kafka-2555") / "result.json"
    code, printed = _run([*CHECK, "--json", str(out)])
    assert code == 1
    return printed, out, json.loads(out.read_text())


def _step_block(printed: str, number: int) -> list[str]:
    """The lines of step `number` of the printed counterexample (its label and changes)."""
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if line[2:].startswith(f"{number:3}. "))
    end = start + 1
    while end < len(lines) and lines[end].startswith(" " * 9):
        end += 1
    return lines[start:end]


def test_each_step_shows_what_it_changed(checked):
    printed, _, _ = checked
    eviction = _step_block(printed, 18)
    assert eviction[0] == "   18. fault timer HeartbeatExpired consumer-0 evicts live consumer-0"
    assert "         coordinator.group: Stable → Empty" in eviction
    assert "         coordinator.generation: 1 → 2" in eviction
    assert (
        "         coordinator.members.consumer-0: removed (was {assignment: t-0, t-1, claims: none})"
    ) in eviction
    assert (
        "         coordinator.timers.HeartbeatExpired consumer-0: removed (was 10000)" in eviction
    )
    assert "         budgets.evictions: 1 → 0" in eviction
    synced = _step_block(printed, 16)
    assert "         c1.owned: none → t-0, t-1" in synced
    assert "         c1.phase: awaiting sync → stable" in synced
    joined = _step_block(printed, 7)
    assert "         c1.member id: - → consumer-0" in joined


def test_the_violating_step_is_marked_and_what_the_property_judges_follows(checked):
    printed, _, _ = checked
    assert " ✗ 23. coordinator handles c1 OffsetCommit(gen=1, member=consumer-0" in printed
    assert "         acknowledged.t-0: added 0" in _step_block(printed, 23)
    # NoZombieCommit judges the coordinator and the clients; the step also changed the
    # acknowledged offsets and its findings.
    judged = printed.split("  what NoZombieCommit judges (", 1)[1].splitlines()
    assert judged[0] == "coordinator, c1, c2, acknowledged, step_problems), after step 23:"
    assert "       c1:" in judged
    assert "         member id: consumer-0" in judged
    assert "         generation: 1" in judged
    assert "         group: PreparingRebalance" in judged
    # Only the last step is marked.
    assert printed.count("✗") == 2  # the mark, and the header saying what it means


def test_the_json_holds_every_state_as_data(checked):
    _, _, document = checked
    (violation,) = document["violations"]
    assert violation["violating_step"] == 23
    assert violation["reads"] == ["coordinator", "c1", "c2", "acknowledged", "step_problems"]
    assert violation["initial_state"]["coordinator"]["group"] == "none"
    trace = violation["trace"]
    assert [step["violating"] for step in trace] == [False] * 22 + [True]
    eviction = trace[17]
    assert eviction["state"]["coordinator"]["group"] == "Empty"
    assert eviction["state"]["coordinator"]["members"] == {}
    assert eviction["state"]["c1"]["owned"] == ["t-0", "t-1"]
    assert {
        "path": ["coordinator", "group"],
        "kind": "changed",
        "before": "Stable",
        "after": "Empty",
    } in eviction["changes"]
    assert trace[22]["state"]["acknowledged"] == {"t-0": 0, "t-1": 0}


def test_full_prints_whole_states_with_the_changes_starred(tmp_path):
    code, printed = _run([*CHECK, "--full"])
    assert code == 1
    assert "  initial state:" in printed
    eviction = _step_block(printed, 18)
    assert "         * group: Empty" in eviction
    assert "           loaded: yes" in eviction  # unchanged lines are printed too, unstarred
    assert "         c2:" in eviction


def test_replay_prints_one_state(checked):
    _, out, _ = checked
    code, printed = _run(["replay", str(out), "--step", "18"])
    assert code == 1
    lines = printed.splitlines()
    assert lines[1] == (
        "  step 18 of 23: fault timer HeartbeatExpired consumer-0 evicts live consumer-0"
    )
    assert "       coordinator.group: Stable → Empty" in lines
    state = lines[lines.index("  the state after it:") + 1 :]
    assert "         group: Empty" in state
    assert "         owned: t-0, t-1" in state
    code, printed = _run(["replay", str(out), "--step", "0"])
    assert "  the initial state (the trace has 23 steps):" in printed


def test_replay_refuses_a_step_the_trace_does_not_have(checked, capsys):
    _, out, _ = checked
    assert main(["replay", str(out), "--step", "24"]) == 2
    assert "violation 1 has 23 steps; --step 24 is none of them" in capsys.readouterr().err
    assert main(["replay", str(out), "--step", "-1"]) == 2


def test_replay_prints_each_step_with_its_changes(checked):
    _, out, _ = checked
    code, printed = _run(["replay", str(out)])
    assert code == 1
    assert "         coordinator.group: Stable → Empty" in _step_block(printed, 18)
    assert " ✗ 23. " in printed
