"""The world properties that tie each consumer to the coordinator, each shown catching a small
misbehaving consumer that every earlier property let through."""

from __future__ import annotations

from dataclasses import replace

from groupspec.checker.bfs import Limits, search
from groupspec.checker.counterexample import reconstruct
from groupspec.checker.derived import invariant_problems, invariants
from groupspec.models.faults.switch import FaultSwitch
from groupspec.models.group_world import GroupWorld
from groupspec.models.presets import load_preset
from groupspec.models.world_state import GROUP_ID
from groupspec.spec.consumer import ConsumerEvent, ConsumerOutcome, ConsumerState
from groupspec.spec.consumer.events import Close, ResponseReceived
from groupspec.vocabulary.requests import JoinGroupRequest, TopicPartition
from groupspec.vocabulary.responses import SyncGroupResponse


class Hoarder(FaultSwitch):
    """A consumer that keeps every partition it ever owned (it never revokes) and never
    rejoins to hand one over: the misbehaving consumer of issue 18."""

    name = "test-hoarder"

    def consumer_outcome(
        self, consumer: ConsumerState, event: ConsumerEvent, outcome: ConsumerOutcome
    ) -> ConsumerOutcome:
        """Keep what the step gave up; ignore the rejoin a revocation asks for."""
        if isinstance(event, Close) or outcome.state.closed:
            return outcome
        state = outcome.state
        kept = tuple(sorted(set(consumer.owned) | set(state.owned)))
        if kept != state.owned:
            state = replace(state, owned=kept)
        if (
            isinstance(event, ResponseReceived)
            and isinstance(event.body, SyncGroupResponse)
            and state.rejoin_needed
        ):
            state = replace(state, rejoin_needed=False)
        return replace(outcome, state=state)


def _with_fault(world: GroupWorld, switch: FaultSwitch) -> GroupWorld:
    world.fault = switch  # the world reads its switch on every step
    return world


def _violated(world: GroupWorld) -> dict[str, object]:
    result = search(world, limits=Limits(all_violations=True))
    assert result.complete or result.problems
    return {found.problem.property_name: found for found in result.problems}


def test_a_hoarding_cooperative_consumer_breaks_assignment_agreement():
    world = _with_fault(load_preset("cooperative-3", {"max_generation": "2"}), Hoarder())
    violated = _violated(world)
    assert "AssignmentAgreement" in violated, sorted(violated)
    example = reconstruct(world, violated["AssignmentAgreement"])  # type: ignore[arg-type]
    last = example.steps[-1].state
    (agreement,) = [i for i in invariants(world) if i.name == "AssignmentAgreement"]
    problems = invariant_problems(world, agreement, last)
    assert any("where the coordinator assigned it" in problem for problem in problems), problems
    # Every partition still has exactly one owner, so the old properties could not see it;
    # Convergence's goal no longer accepts such a state either.
    (among_current,) = [
        i for i in invariants(world) if i.name == "ExclusiveOwnershipAmongCurrentMembers"
    ]
    assert invariant_problems(world, among_current, last) == []
    assert not world.converged(last)


class KeepsPartitionsWhileRejoining(FaultSwitch):
    """An eager consumer whose onJoinPrepare forgets to give up its partitions: it keeps
    consuming them while the group hands them to someone else."""

    name = "test-keeps-while-rejoining"

    def consumer_outcome(
        self, consumer: ConsumerState, event: ConsumerEvent, outcome: ConsumerOutcome
    ) -> ConsumerOutcome:
        """Undo a revocation that comes with a JoinGroup (the eager onJoinPrepare)."""
        rejoining = any(isinstance(send.request, JoinGroupRequest) for send in outcome.sends)
        if not rejoining or not consumer.owned or outcome.state.owned:
            return outcome
        return replace(outcome, state=replace(outcome.state, owned=consumer.owned))


def test_a_consumer_that_keeps_partitions_while_rejoining_breaks_exclusive_consumption():
    world = _with_fault(load_preset("eager-2", {"commits": "0"}), KeepsPartitionsWhileRejoining())
    violated = _violated(world)
    assert "ExclusiveConsumption" in violated, sorted(violated)
    example = reconstruct(world, violated["ExclusiveConsumption"])  # type: ignore[arg-type]
    (exclusive,) = [i for i in invariants(world) if i.name == "ExclusiveConsumption"]
    problems = invariant_problems(world, exclusive, example.steps[-1].state)
    assert any("members of the group" in problem for problem in problems), problems


def _commits_from_on_partitions_revoked(world: GroupWorld) -> list[str]:
    """Labels of explored steps where the coordinator accepted a commit naming a partition
    that is no longer in the committing member's assignment (it was just revoked)."""
    found: list[str] = []

    def observe(_before: int, state: object, step: object, _after: int, _new: bool) -> None:
        label: str = step.label  # type: ignore[attr-defined]
        if not label.startswith("coordinator handles") or "OffsetCommit" not in label:
            return
        index = int(label.split()[2].removeprefix("c")) - 1
        _cid, request = state.clients[index].outbound[0]  # type: ignore[attr-defined]
        after = step.state  # type: ignore[attr-defined]
        group = after.coordinator.group(GROUP_ID)
        member = group.member(request.member_id) if group is not None else None
        if member is None or not after.acknowledged:
            return
        assigned = world.decoder.assignment(member.assignment) or ()
        acknowledged = {tp for tp, _offset in after.acknowledged}
        named = {TopicPartition(p.topic, p.partition) for p in request.partitions}
        if named & acknowledged and not named <= set(assigned):
            found.append(label)

    result = search(world, observer=observe)
    assert result.complete and result.verdict == "pass", result.problems
    return found


def test_a_commit_from_on_partitions_revoked_is_explored_and_allowed():
    found = _commits_from_on_partitions_revoked(load_preset("cooperative-2"))
    assert found, "no commit of a revoked partition was accepted"


def test_without_commit_on_revoke_no_such_commit_is_made():
    world = load_preset("cooperative-2", {"commit_on_revoke": "false"})
    assert _commits_from_on_partitions_revoked(world) == []


def test_invariants_lists_every_property_a_group_world_checks(capsys):
    from groupspec.cli.main import main

    assert main(["invariants"]) == 0
    listed = {line.split()[1] for line in capsys.readouterr().out.splitlines()}
    world = load_preset("eager-2", {"naive_zombie_property": "true"})
    checked = {p.name for p in world.properties}
    assert checked <= listed, sorted(checked - listed)
    assert {"AssignmentAgreement", "ExclusiveConsumption", "Convergence"} <= listed
