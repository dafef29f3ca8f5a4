"""The closed group world: every preset explores exhaustively and passes, the zombie window is
found for the naive property, symmetry reduces without changing verdicts, states are canonical."""

import os
import random
import re
import subprocess
import sys
from collections import deque

import pytest

from groupspec.checker.bfs import Limits, search
from groupspec.checker.counterexample import reconstruct
from groupspec.checker.derived import action_properties, invariant_problems, invariants, transitions
from groupspec.checker.fingerprint import check_canonical, fingerprint
from groupspec.checker.liveness import check_liveness
from groupspec.diagrams.explore import explore as explore_all
from groupspec.diagrams.explore import shortest_run
from groupspec.models.canonical import member_ids, permuted_findings
from groupspec.models.group_world import NAIVE_PROPERTY, GroupWorld
from groupspec.models.preset_models import group_preset_names, load_model
from groupspec.models.presets import load_preset, read_preset
from groupspec.models.world_params import WorldParameters
from groupspec.models.world_state import GROUP_ID, WorldState, canonical_repr

# The presets that take longest (about 30-40 s each); `-m "not slow"` leaves them out.
SLOW = {"cooperative-3", "failover"}


def explore(world, limit):
    """Up to `limit` distinct representative states, breadth-first, with their concrete steps."""
    initial = world.representative(world.initial_states()[0])
    seen = {fingerprint(initial): initial}
    queue = deque([initial])
    steps = []
    while queue and len(seen) < limit:
        state = queue.popleft()
        for step in transitions(world, state):
            steps.append((state, step))
            representative = world.representative(step.state)
            key = fingerprint(representative)
            if key not in seen:
                seen[key] = representative
                queue.append(representative)
    return list(seen.values()), steps


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.slow) if name in SLOW else name
        for name in group_preset_names()
    ],
)
def test_every_preset_explores_exhaustively_and_gives_what_it_expects(name):
    loaded = load_model(name)
    world = loaded.model
    result = search(world, record_graph=True)
    assert result.complete
    assert result.verdict == "pass", [
        (p.problem.property_name, p.problem.detail) for p in result.problems
    ]
    assert result.distinct_states > 100
    # Convergence under fairness, on the full preset; the bound must leave it something to show.
    (convergence,) = check_liveness(world, result)
    assert convergence.verdict == "pass", [v.detail for v in convergence.violations]
    assert convergence.goal_states > 0
    assert convergence.cut_states < convergence.applicable_states / 2
    # The preset's [expected] table is the regression record of these figures.
    expected = loaded.expected
    assert expected is not None, f"{name} has no [expected] table"
    assert (expected.verdict, expected.distinct_states, expected.transitions, expected.depth) == (
        "pass",
        result.distinct_states,
        result.transitions,
        result.depth,
    )
    # ... and of the rules the check fires: a rule that stops being reached is a regression
    # (`groupspec coverage --record` rewrites the list when a change reaches more).
    reached = set(result.rule_counts)
    assert expected.rules_reached is not None, f"{name} records no rules_reached"
    lost = sorted(set(expected.rules_reached) - reached)
    new = sorted(reached - set(expected.rules_reached))
    assert not lost, f"{name} no longer reaches {lost}"
    assert not new, f"{name} now also reaches {new}: run `groupspec coverage --record`"
    print(
        f"{name}: {result.distinct_states} states, {result.transitions} transitions, "
        f"depth {result.depth}, {result.elapsed_s:.1f} s"
    )


def test_the_zombie_window_is_a_counterexample_to_the_naive_property():
    world = load_preset("eager-2", {"naive_zombie_property": "true"})
    assert world.expected_failures == (NAIVE_PROPERTY,)
    result = search(world)
    assert result.verdict == "fail"
    (found,) = result.problems
    assert found.problem.property_name == NAIVE_PROPERTY
    example = reconstruct(world, found)
    labels = [step.label for step in example.steps]
    # A live member is evicted (its client stalled) and its partitions go to the other client,
    # while the evicted client still believes it owns them.
    assert any("evicts live" in label for label in labels), labels
    last = example.steps[-1].state
    assert invariants(world)[-1].name == NAIVE_PROPERTY
    assert invariant_problems(world, invariants(world)[-1], last)
    by_name = {invariant.name: invariant for invariant in invariants(world)}
    assert invariant_problems(world, by_name["ExclusiveOwnershipAmongCurrentMembers"], last) == []


def test_without_the_naive_property_the_same_world_checks_no_zombie_commit():
    # test_every_preset_explores_exhaustively_and_passes[eager-2] shows that it holds.
    world = load_preset("eager-2")
    names = [p.name for p in action_properties(world)] + [i.name for i in invariants(world)]
    assert "NoZombieCommit" in names and NAIVE_PROPERTY not in names
    assert world.parameters.commits >= 1 and world.parameters.evictions >= 1
    assert world.expected_failures == ()


# A measurement more than a check (about a minute, two full searches): `pytest -m bench` runs it.
@pytest.mark.bench
def test_symmetry_reduces_three_interchangeable_clients_close_to_six_fold():
    overrides = {"max_generation": "1"}
    reduced = search(load_preset("eager-3", overrides))
    full = search(load_preset("eager-3", {**overrides, "symmetry": "false"}))
    assert reduced.verdict == full.verdict == "pass"
    factor = full.distinct_states / reduced.distinct_states
    print(f"symmetry: {full.distinct_states} -> {reduced.distinct_states} states, x{factor:.2f}")
    assert factor > 4


def test_symmetry_does_not_change_a_failing_verdict():
    overrides = {"naive_zombie_property": "true"}
    reduced = search(load_preset("eager-2", overrides))
    full = search(load_preset("eager-2", {**overrides, "symmetry": "false"}))
    assert reduced.verdict == full.verdict == "fail"
    assert reduced.problems[0].problem.property_name == full.problems[0].problem.property_name
    assert len(reduced.problems[0].path) == len(full.problems[0].path)


def orbit_of(symmetric: GroupWorld, state: WorldState) -> int:
    """The fingerprint of `state`'s orbit under swapping interchangeable clients."""
    return fingerprint(symmetric.representative(state))


def reached_orbits(explored: GroupWorld, symmetric: GroupWorld) -> set[int]:
    """The orbits of every state `explored` reaches (all of its steps, properties ignored)."""
    orbits = {orbit_of(symmetric, state) for state in explored.initial_states()}
    explore_all(explored, lambda _state, step: orbits.add(orbit_of(symmetric, step.state)))
    return orbits


@pytest.mark.parametrize(
    ("preset", "overrides", "without_fault"),
    [
        pytest.param(
            "eager-2",
            {"fault": "KAFKA-12890", "max_generation": "1", "evictions": "0", "commits": "0"},
            361,
            id="KAFKA-12890",
        ),
        pytest.param(
            "cooperative-3",
            {
                "fault": "KAFKA-12984",
                "clients": "2",
                "partition_growths": "1",
                "max_generation": "1",
            },
            1339,
            id="KAFKA-12984",
        ),
        pytest.param(
            "cooperative-3",
            {"fault": "KIP-429", "clients": "2", "max_generation": "2"},
            949,
            id="KIP-429",
        ),
    ],
)
def test_fault_switches_commute_with_swapping_interchangeable_clients(
    preset: str, overrides: dict[str, str], without_fault: int
) -> None:
    """Symmetry reduction stays on with a fault: the symmetric world reaches exactly the orbits
    of the states the world without symmetry reaches."""
    symmetric = load_preset(preset, overrides)
    full = load_preset(preset, {**overrides, "symmetry": "false"})
    assert symmetric.symmetry_classes and not full.symmetry_classes
    orbits = reached_orbits(full, symmetric)
    assert reached_orbits(symmetric, symmetric) == orbits
    # The switch is live within these bounds: without it the world is smaller.
    healthy = load_preset(preset, {**overrides, "fault": ""})
    assert len(reached_orbits(healthy, healthy)) == without_fault < len(orbits)


def world_parts(state: WorldState):
    """Every part of a world state except the coordinator's own (which keeps frozensets)."""
    yield state.clients
    yield state.cluster
    yield state.budgets
    yield state.acknowledged
    yield state.step_problems


@pytest.mark.parametrize("name", ["mixed", "failover"])
def test_states_are_canonical(name):
    world = load_preset(name)
    states, _ = explore(world, 1500)
    for state in states:
        for part in world_parts(state):
            check_canonical(part)
        assert world.representative(state) == state  # representatives are fixed points
        assert repr(state) == canonical_repr(state)


def test_frozensets_print_sorted_whatever_their_insertion_order():
    first, second = frozenset(), frozenset()
    for name in ("consumer-3", "consumer-1", "i1-0", "consumer-2"):
        first = first | {name}
    for name in ("i1-0", "consumer-2", "consumer-1", "consumer-3"):
        second = second | {name}
    assert canonical_repr(first) == canonical_repr(second)
    assert canonical_repr(first) == (
        "frozenset({'consumer-1', 'consumer-2', 'consumer-3', 'i1-0'})"
    )


def test_fingerprints_agree_across_processes_with_different_hash_seeds():
    script = (
        "from groupspec.models.presets import load_preset\n"
        "from groupspec.checker.bfs import search\n"
        "r = search(load_preset('static-2', {'max_generation': '1'}))\n"
        "print(r.distinct_states, sum(r.parents) % 1000003)\n"
    )
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        )
        outputs.add(run.stdout)
    assert len(outputs) == 1, outputs


MEMBER_ID = re.compile(r"'((?:consumer|i\d+)-\d+)'")


def test_member_ids_are_compact_and_all_accounted_for():
    world = load_preset("mixed")
    states, _ = explore(world, 1500)
    for state in states:
        mentioned = set(MEMBER_ID.findall(canonical_repr(state)))
        assert mentioned == member_ids(state)
        by_prefix = {}
        for member_id in mentioned:
            prefix, _, number = member_id.rpartition("-")
            by_prefix.setdefault(prefix, []).append(int(number))
        for numbers in by_prefix.values():
            assert sorted(numbers) == list(range(len(numbers)))


def test_a_crash_closes_the_connection_and_parked_requests_answer_into_the_void():
    world = load_preset("static-2")
    _, steps = explore(world, 3000)
    crashes = [(before, step) for before, step in steps if step.action == "Crash"]
    assert crashes
    for before, step in crashes:
        index = int(step.label.split()[1][1:]) - 1
        after = step.state.clients[index]
        assert after.outbound == () and after.inbound == () and after.consumer.in_flight == ()
        assert after.incarnation == before.clients[index].incarnation + 1
        assert after.consumer.generation.member_id == ""


def test_converged_states_exist_and_the_initial_state_is_not_one():
    world = load_preset("eager-2")
    states, _ = explore(world, 3000)
    initial = world.initial_states()[0]
    assert not world.converged(initial)
    converged = [state for state in states if world.converged(state)]
    assert converged
    for state in converged:
        owned = sorted(p for slot in state.clients for p in slot.consumer.owned)
        assert owned == list(state.cluster.partitions(("t",)))
    assert all(world.faults_exhausted(s) == s.budgets.exhausted() for s in states)


def test_a_generation_bound_cut_is_terminal_not_a_deadlock():
    world = GroupWorld(WorldParameters(clients=1, max_generation=1, evictions=0))
    result = search(world)
    assert result.verdict == "pass"


def test_the_world_travels_to_worker_processes():
    world = load_preset("eager-2", {"max_generation": "1"})
    single = search(world)
    double = search(world, workers=2)
    assert (double.distinct_states, double.transitions, double.verdict) == (
        single.distinct_states,
        single.transitions,
        single.verdict,
    )


def test_a_limit_stops_the_search_as_incomplete():
    result = search(load_preset("cooperative-3"), limits=Limits(max_states=200))
    assert result.verdict == "incomplete"


def test_presets_describe_their_worlds():
    for name in group_preset_names():
        preset = read_preset(name)
        assert preset.world().name == name


def test_a_finding_about_a_client_follows_it_when_clients_are_swapped():
    findings = (("P", "c1: gave t-0 away"), ("P", "c2: kept t-1"), ("P", "c2: and t-2"))
    assert permuted_findings(findings, (1, 0)) == (
        ("P", "c1: kept t-1"),
        ("P", "c1: and t-2"),
        ("P", "c2: gave t-0 away"),
    )
    coordinator_finding = (("GenerationMonotonic", "stored generation went from 2 to 1"),)
    assert permuted_findings(coordinator_finding, (1, 0)) == coordinator_finding


def test_a_consumer_that_closes_leaves_and_the_other_converges_alone():
    world = load_preset("scale-down")

    def alone_and_converged(_state: WorldState, step) -> bool:
        after = step.state
        group = after.coordinator.group("g")
        return (
            any(slot.consumer.closed for slot in after.clients)
            and world.converged(after)
            and group is not None
            and len(group.members) == 1
            and group.generation_id == 2
        )

    run = shortest_run(world, world.initial_states()[0], alone_and_converged)
    labels = [step.label for step in run.steps]
    closed = next(i for i, label in enumerate(labels) if "closes" in label)
    leaver = labels[closed].split()[0]
    handled = next(i for i, label in enumerate(labels) if "LeaveGroup" in label)
    assert closed < handled and f"handles {leaver} LeaveGroup" in labels[handled]
    (remaining,) = [slot for slot in run.final.clients if not slot.consumer.closed]
    assert sorted(remaining.consumer.owned) == sorted(run.final.cluster.partitions(("t",)))


def test_without_a_close_budget_no_consumer_closes():
    world = load_preset("scale-down", {"closes": "0"})
    steps = []
    explore_all(world, lambda _state, step: steps.append(step.action))
    assert "Close" not in steps and "HandleLeaveGroup" not in steps


def test_a_static_member_that_closes_stays_until_its_session_times_out():
    """KIP-345: close() sends no LeaveGroup for a static member; the coordinator removes it when
    its session timer fires, and that timer is no eviction fault (no live client holds the id)."""
    world = load_preset("static-2", {"closes": "1", "max_generation": "1", "crashes": "0"})

    def removed_after_close(state: WorldState, step) -> bool:
        group = step.state.coordinator.group("g")
        return (
            any(slot.consumer.closed for slot in state.clients)
            and group is not None
            and len(group.members) == 1
            and step.action == "HeartbeatExpired"
        )

    run = shortest_run(world, world.initial_states()[0], removed_after_close)
    labels = [step.label for step in run.steps]
    closed = next(i for i, label in enumerate(labels) if "closes" in label)
    assert "client.leave.skipped_static" in run.steps[closed].rules
    assert not any("LeaveGroup" in label for label in labels)
    # Not "fault timer ...": with no eviction budget (static-2 has none) a fault could not fire.
    assert labels[-1].startswith("timer HeartbeatExpired")


def _first_hand_off(world, seeds: range, steps: int = 400):
    """The generation at which a partition one consumer owned is first owned by another, in
    the first of the seeded random walks where that happens (None: in none of them)."""
    for seed in seeds:
        rng = random.Random(seed)
        state = world.initial_states()[0]
        owners: dict[object, set[int]] = {}
        for _ in range(steps):
            steps_here = transitions(world, state)
            if not steps_here:
                break
            state = rng.choice(steps_here).state
            for index, slot in enumerate(state.clients):
                for partition in slot.consumer.owned:
                    before = owners.setdefault(partition, set())
                    if before - {index}:
                        return slot.consumer.generation.generation_id
                    before.add(index)
    return None


def test_cooperative_3_reaches_the_hand_off_of_a_revoked_partition():
    """cooperative-3's bounds reach the second rebalance: a partition its owner revoked is owned
    by another consumer at generation 3 (at generation 2 the revoked partition is only
    withheld)."""
    world = load_preset("cooperative-3", {"symmetry": "false"})
    assert _first_hand_off(world, range(60)) == 3


def test_an_admin_client_reaches_the_admin_apis_and_one_delete():
    # limits-2's admin client: read-only requests change no state, so they are no transition
    # of the graph, yet the rules they fire are reached; one DeleteGroups of the Empty group
    # succeeds, after which a consumer still holding its member id rejoins an unknown group.
    result = search(load_preset("limits-2"))
    assert result.verdict == "pass"
    for rule_id in (
        "describe.stable_group",
        "describe.unknown_group",
        "list.groups",
        "fetch.all_offsets",
        "delete.non_empty_group",
        "delete.empty_group_deleted",
        "join.unknown_group_with_member_id",
    ):
        assert result.rule_counts[rule_id] > 0, rule_id
    assert result.action_counts["HandleDeleteGroups"] > 0
    assert result.action_counts["HandleDescribeGroups"] == 0  # self-loops only
    without = search(load_preset("limits-2", {"admin": "false"}))
    assert without.rule_counts["describe.stable_group"] == 0


def _timer_steps(world):
    """(label, group before) of every explored coordinator timer step."""
    seen = []

    def observe(_parent, state, step, _target, _new):
        if step.label.startswith(("timer", "fault timer")):
            seen.append((step.label, state.coordinator.group(GROUP_ID)))

    result = search(world, observer=observe)
    assert result.complete and result.verdict == "pass", result.problems
    return seen


def test_a_live_static_member_misses_a_rebalance_only_as_a_fault():
    # The join timer fires before a live member rejoins only if its client stalled for the
    # rebalance timeout: a fault of the evictions budget, never free (docs/checking.md, "Time").
    overrides = {"crashes": "0", "max_generation": "2"}
    stalled = "had not rejoined"
    free = _timer_steps(load_preset("static-2", {**overrides, "evictions": "0"}))
    assert not [label for label, _ in free if stalled in label]
    budgeted = _timer_steps(load_preset("static-2", {**overrides, "evictions": "1"}))
    assert [label for label, _ in budgeted if stalled in label]


def test_no_session_expires_while_the_sync_timer_runs():
    # The sync timer and every session were armed when the join completed; the session is
    # longer, so real time fires the sync timer first.
    steps = _timer_steps(load_preset("static-2", {"crashes": "0", "max_generation": "2"}))
    during_sync = [
        label
        for label, group in steps
        if "HeartbeatExpired" in label and group is not None and group.sync_timer is not None
    ]
    assert during_sync == []
    assert any("HeartbeatExpired" in label for label, _ in steps)  # the filter is not vacuous


def test_append_failures_are_a_budgeted_fault():
    # Without the budget no append fails; with one, exactly one failure per run at most, and
    # the coordinator's write-failure branches are reached.
    overrides = {"static_clients": "1", "crashes": "0", "max_generation": "1", "commits": "1"}
    healthy = search(load_preset("eager-2", overrides))
    assert not [r for r in healthy.rule_counts if r.endswith("write_failed")]
    failing = search(load_preset("eager-2", {**overrides, "append_failures": "1"}))
    assert failing.verdict == "pass"
    assert failing.rule_counts["join.new_group_write_failed"] > 0
    assert failing.rule_counts["sync.leader_assignment_write_failed"] > 0
    assert failing.rule_counts["commit.write_failed"] > 0
    assert failing.distinct_states > healthy.distinct_states


def _group_steps(world, prefix):
    """(group before, group after) of every explored step whose label starts with `prefix`,
    and the search result."""
    seen = []

    def observe(_parent, state, step, _target, _new):
        if step.label.startswith(prefix):
            after = step.state.coordinator.group(GROUP_ID)
            seen.append((state.coordinator.group(GROUP_ID), after))

    result = search(world, observer=observe)
    assert result.complete and result.verdict == "pass", result.problems
    return seen, result


def _membership(group):
    if group is None:
        return None
    return (
        group.generation_id,
        group.state,
        group.protocol_type,
        tuple((m.member_id, m.protocols, m.assignment) for m in group.members),
    )


def test_the_misbehaving_client_is_refused_and_changes_no_membership():
    # Each request no Kafka consumer sends gets its own refusal (a rule of its own) and leaves
    # the group's members, generation and protocol as they were; the consumers converge anyway.
    world = load_preset("scale-down", {"closes": "0"})
    steps, result = _group_steps(world, "misbehaving client")
    assert steps, "the misbehaving client's steps that change state are listed"
    assert all(_membership(before) == _membership(after) for before, after in steps)
    for rule_id in (
        "join.new_member.inconsistent_protocol",
        "join.existing_member.inconsistent_protocol",
        "sync.inconsistent_protocol",
        "join.invalid_session_timeout",
        "coordinator.invalid_group_id",
        "commit.metadata_too_large",
        "join.pending_member_with_instance_id",
        "leave.no_member_id_unknown_instance",
    ):
        assert result.rule_counts[rule_id] > 0, rule_id
    without = search(load_preset("scale-down", {"closes": "0", "misbehaving_client": "false"}))
    assert without.rule_counts["join.invalid_session_timeout"] == 0


def test_the_admin_removes_a_static_member_once_and_resets_offsets():
    # admin_resets: one removal by instance id (a budget, or removals could go on forever),
    # and an offset reset that creates a simple group when none exists.
    world = load_preset("admin-1", {"misbehaving_client": "false"})
    removals, result = _group_steps(world, "admin sends LeaveGroup")
    removed = [(b, a) for b, a in removals if _membership(b) != _membership(a)]
    assert removed and all(len(a.members) == len(b.members) - 1 for b, a in removed)
    assert result.rule_counts["leave.removed_by_instance_id"] > 0
    assert result.rule_counts["commit.simple_group_created"] > 0
    assert result.rule_counts["commit.unknown_group_with_generation"] > 0
    plain = search(load_preset("admin-1", {"misbehaving_client": "false", "admin_resets": "false"}))
    assert plain.rule_counts["leave.removed_by_instance_id"] == 0
