"""States as people read them (checker/describe.py): descriptions, changes, what a property
reads, on two-phase commit (described generically) and the group world (its own hook)."""

from typing import Any

from groupspec.checker.derived import initial_states, transitions
from groupspec.checker.describe import (
    ADDED,
    CHANGED,
    REMOVED,
    Change,
    changes,
    describe_run,
    describe_state,
    format_change,
    format_description,
    plain_data,
    property_slots,
    read_sections,
    violating_step,
)
from groupspec.models.preset_models import load_model


def _two_phase() -> Any:
    return load_model("two-phase", {}).model


def test_a_model_without_a_hook_is_described_slot_by_slot():
    model = _two_phase()
    (initial,) = initial_states(model)
    described = describe_state(model, initial)
    assert list(described) == ["tm", "rm1", "rm2", "rm3"]
    assert described["tm"] == {
        "tm_state": "init",
        "commit_sent": False,
        "abort_sent": False,
        "prepared": 0,
    }
    assert described["rm2"] == {"state": "working", "sent_prepared": False}


def test_plain_data_turns_values_into_json_data():
    class Colour:
        def __str__(self) -> str:
            return "blue"

    assert plain_data((1, frozenset({"b", "a"}), b"xyz", None, Colour())) == [
        1,
        ["a", "b"],
        "3 bytes",
        None,
        "blue",
    ]


def test_changes_compare_dicts_key_by_key_and_other_values_whole():
    before = {"group": {"state": "Stable", "members": {"m0": {"parked": None}}}, "owned": ["t-0"]}
    after = {"group": {"state": "Empty", "members": {"m1": {"parked": "JoinGroup"}}}, "owned": []}
    found = changes(before, after)
    assert found == (
        Change(("group", "state"), CHANGED, "Stable", "Empty"),
        Change(("group", "members", "m1"), ADDED, None, {"parked": "JoinGroup"}),
        Change(("group", "members", "m0"), REMOVED, {"parked": None}, None),
        Change(("owned",), CHANGED, ["t-0"], []),
    )
    assert [format_change(change) for change in found] == [
        "group.state: Stable → Empty",
        "group.members.m1: added {parked: JoinGroup}",
        "group.members.m0: removed (was {})",
        "owned: t-0 → none",
    ]
    assert changes(after, after) == ()
    assert found[1].as_json() == {
        "path": ["group", "members", "m1"],
        "kind": "added",
        "after": {"parked": "JoinGroup"},
    }


def test_a_whole_state_stars_what_changed_in_the_margin():
    state = {"tm": {"tm_state": "committed", "prepared": 1}, "rm1": {"state": "working"}}
    lines = format_description(state, "  ", changed=frozenset({("tm", "tm_state")}))
    assert lines == [
        "  tm:",
        "  * tm_state: committed",
        "    prepared: 1",
        "  rm1:",
        "    state: working",
    ]


def test_a_run_is_described_step_by_step():
    model = _two_phase()
    (initial,) = initial_states(model)
    step = next(t for t in transitions(model, initial) if t.label == "RMPrepare(rm1)")
    run = describe_run(model, initial, [step])
    assert run.state(0) == describe_state(model, initial)
    assert [format_change(change) for change in run.steps[0].changes] == [
        "rm1.state: working → prepared",
        "rm1.sent_prepared: no → yes",
    ]


def test_what_a_property_reads_comes_from_its_declaration():
    model = _two_phase()
    (initial,) = initial_states(model)
    described = describe_state(model, initial)
    # Consistent's one part reads every RM; TypeOK's parts read every slot.
    assert property_slots(model, "invariant", "Consistent") == (1, 2, 3)
    assert property_slots(model, "invariant", "TypeOK") == (0, 1, 2, 3)
    assert read_sections(model, described, "invariant", "Consistent") == ("rm1", "rm2", "rm3")
    # An action property declares no slots here: what the violating step changed is shown.
    last = (Change(("tm", "tm_state"), CHANGED, "init", "aborted"),)
    assert read_sections(model, described, "action", "TMDecidesOnce", last) == ("tm",)
    assert read_sections(model, described, "liveness", "AllDecided") == ("rm1", "rm2", "rm3")


def test_the_violating_step_is_the_last_except_on_a_fair_cycle():
    assert violating_step("invariant", 5) == 5
    assert violating_step("action", 3) == 3
    assert violating_step("goal-unreachable", 0) == 0
    assert violating_step("fair-cycle", 7) is None


def test_the_group_world_describes_its_coordinator_and_clients():
    loaded = load_model("eager-2", {})
    world = loaded.model
    (initial,) = initial_states(world)
    described = describe_state(world, initial)
    assert list(described) == ["coordinator", "c1", "c2", "cluster", "budgets", "acknowledged"]
    coordinator = described["coordinator"]
    assert coordinator["group"] == "none"
    assert coordinator["members"] == {}
    assert coordinator["timers"] == {"OffsetRetentionCheck": 600000}
    assert described["c1"]["phase"] == "unjoined"
    assert described["c1"]["member id"] is None
    assert described["budgets"] == {"evictions": 1, "commits": 1}
    # Every section is named after a slot, so a property's slots pick sections out.
    assert set(described) <= set(world.slot_names)
