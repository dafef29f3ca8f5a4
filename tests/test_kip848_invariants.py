"""Each invariant of the KIP-848 coordinator (spec/kip848/invariants.py) catches a small faulty
state built by hand, and holds on the state the faults were made from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from kip848_helpers import CONFIG, beat, first, join, only, send, tps

from groupspec.spec.kip848 import ConsumerGroupsState, MemberState
from groupspec.spec.kip848.invariants import KIP848_INVARIANTS, check_state
from groupspec.spec.kip848.records import CurrentAssignmentKey, compacted, records_between
from groupspec.spec.kip848.state import ConsumerGroup

EMPTY = ConsumerGroupsState()


def _two_stable() -> ConsumerGroupsState:
    state = only(send(EMPTY, join("a"))).state
    state = first(send(state, join("b")), a=tps("t0-0", "t1-0"), b=tps("t0-1")).state
    state = only(send(state, beat("a", 2, "t0-0", "t0-1", "t1-0"))).state
    state = only(send(state, beat("a", 2, "t0-0", "t1-0"))).state
    return only(send(state, beat("b", 3))).state


VALID = _two_stable()
(GROUP,) = VALID.iter_groups()


def _with(group: ConsumerGroup) -> ConsumerGroupsState:
    # The log is rewritten to match, so that each faulty state breaks only its own invariant.
    return replace(VALID.with_group(group), log=compacted((), records_between(CONFIG, None, group)))


def record_left_out() -> ConsumerGroupsState:
    # b's current assignment never reached the log: replay rebuilds b at epoch 0 with nothing.
    kept = tuple(r for r in VALID.log if r.key != CurrentAssignmentKey("g", "b"))
    return replace(VALID, log=kept)


def double_owner() -> ConsumerGroupsState:
    # b revokes t1-0, which a holds: the group is Reconciling, and t1-0 has two owners.
    b = GROUP.member("b")
    revoking = replace(b, state=MemberState.UNREVOKED_PARTITIONS, pending_revocation=tps("t1-0"))
    return _with(GROUP.with_member(revoking))


def stable_member_behind() -> ConsumerGroupsState:
    # Every member is Stable at the epoch, so the group is Stable; but b's target lost t0-1.
    target = GROUP.target
    target["b"] = frozenset()
    return _with(GROUP.with_target(target))


def member_ahead() -> ConsumerGroupsState:
    a = GROUP.member("a")
    return _with(GROUP.with_member(replace(a, member_epoch=GROUP.group_epoch + 1)))


def empty_epochs_apart() -> ConsumerGroupsState:
    return _with(ConsumerGroup("g", group_epoch=4, assignment_epoch=3))


def unrevoked_without_revocations() -> ConsumerGroupsState:
    a = GROUP.member("a")
    return _with(GROUP.with_member(replace(a, state=MemberState.UNREVOKED_PARTITIONS)))


def target_for_stranger() -> ConsumerGroupsState:
    target = GROUP.target
    target["ghost"] = frozenset()
    return _with(GROUP.with_target(target))


FAULTY: dict[str, Callable[[], ConsumerGroupsState]] = {
    "SingleOwner": double_owner,
    "StableGroupReconciled": stable_member_behind,
    "MemberEpochBounded": member_ahead,
    "EmptyEpochsAgree": empty_epochs_apart,
    "UnrevokedHasRevocations": unrevoked_without_revocations,
    "TargetsForMembers": target_for_stranger,
    "LogReplaysToGroups": record_left_out,
}


def test_every_invariant_has_a_faulty_state():
    assert set(FAULTY) == {invariant.name for invariant in KIP848_INVARIANTS}


def test_the_valid_state_keeps_every_invariant():
    assert check_state(VALID) == []


@pytest.mark.parametrize("name", sorted(FAULTY))
def test_the_invariant_catches_its_faulty_state(name):
    found = check_state(FAULTY[name]())
    assert found and {invariant for invariant, _ in found} == {name}, found
