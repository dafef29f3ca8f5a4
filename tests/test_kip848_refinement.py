"""The refinement of the KIP-848 coordinator to the abstract consumer-protocol group
(spec/kip848/refinement.py): the coordinator's own steps refine it (the kip848 presets check
Refinement on every explored step), and each kind of wrong step is a violation."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kip848_helpers import beat, first, join, only, send, tps

from groupspec.checker.check import check
from groupspec.models.kip848_params import Kip848Parameters
from groupspec.models.kip848_world import Kip848World
from groupspec.spec.kip848 import ConsumerGroupsState, MemberState
from groupspec.spec.kip848.refinement import refinement_problems
from groupspec.spec.kip848.state import ConsumerGroup


def _two_members() -> ConsumerGroupsState:
    """a and b (range): a holds t0-0 and t1-0 and still revokes t0-1, which b waits for."""
    state = only(send(ConsumerGroupsState(), join("a"))).state
    state = first(send(state, join("b")), a=tps("t0-0", "t1-0"), b=tps("t0-1")).state
    state = only(send(state, beat("a", 2, "t0-0", "t0-1", "t1-0"))).state
    return only(send(state, beat("a", 3, "t0-0", "t1-0"))).state


def _group(state: ConsumerGroupsState) -> ConsumerGroup:
    (group,) = state.iter_groups()
    return group


def _changed(state: ConsumerGroupsState, group: ConsumerGroup) -> ConsumerGroupsState:
    return state.with_group(group)


def test_the_coordinators_own_steps_refine_the_abstract_group() -> None:
    state = ConsumerGroupsState()
    for request, pick in (
        (join("a"), {}),
        (join("b"), {"a": tps("t0-0", "t1-0"), "b": tps("t0-1")}),
        (beat("a", 2, "t0-0", "t0-1", "t1-0"), {}),
        (beat("a", 3, "t0-0", "t1-0"), {}),
        (beat("b", 3), {}),
        (beat("b", -1), {}),
    ):
        outcomes = send(state, request)
        after = (first(outcomes, **pick) if pick else only(outcomes)).state
        assert refinement_problems(state, after) == [], request
        state = after


def test_a_partition_given_to_a_second_member_is_a_violation() -> None:
    state = _two_members()
    group = _group(state)
    b = group.member("b")
    assert b is not None
    wrong = _changed(state, group.with_member(replace(b, assigned=b.assigned | tps("t0-0"))))
    assert any("t0-0 owned by a, b" in p for p in refinement_problems(state, wrong))


def test_a_partition_outside_the_members_target_is_a_violation() -> None:
    state = only(send(ConsumerGroupsState(), join("a"))).state
    state = first(send(state, join("b")), a=tps("t0-0", "t1-0"), b=tps("t0-1")).state
    group = _group(state)
    a = group.member("a")
    assert a is not None
    # a gives up t0-1 (it is b's target) and, wrongly, b is handed t1-0, which is a's target.
    released = _changed(state, group.with_member(replace(a, assigned=tps("t0-0"))))
    b = _group(released).member("b")
    assert b is not None
    wrong = _changed(released, _group(released).with_member(replace(b, assigned=tps("t1-0"))))
    assert any("which its target does not hold" in p for p in refinement_problems(released, wrong))


def test_a_target_changed_without_a_new_epoch_is_a_violation() -> None:
    state = _two_members()
    group = _group(state)
    swapped = group.with_target({"a": tps("t0-1"), "b": tps("t0-0", "t1-0")})
    problems = refinement_problems(state, _changed(state, swapped))
    assert any("without a new target epoch" in p for p in problems)


def test_an_epoch_going_back_and_a_partition_passed_between_members_are_violations() -> None:
    state = _two_members()
    group = _group(state)
    a, b = group.member("a"), group.member("b")
    assert a is not None and b is not None
    back = _changed(state, group.with_member(replace(a, member_epoch=a.member_epoch - 1)))
    assert any("epoch went back" in p for p in refinement_problems(state, back))
    # a's release of t0-1 and b's taking it are two steps: t0-1 must be free in between.
    both = group.with_member(replace(a, pending_revocation=frozenset())).with_member(
        replace(b, assigned=tps("t0-1"), state=MemberState.STABLE)
    )
    problems = refinement_problems(state, _changed(state, both))
    assert any("t0-1 passed from a to b without being released" in p for p in problems)


@pytest.mark.parametrize("fault", ["KAFKA-16147"])
def test_the_world_reports_a_non_refining_step_as_refinement(fault: str) -> None:
    world = Kip848World(
        Kip848Parameters(leaves=1, fault=fault, check_convergence=False), name="kip848"
    )
    result = check(world)
    assert [found.problem.property_name for found in result.search.problems] == ["Refinement"]
