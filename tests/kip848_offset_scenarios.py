"""Scenarios of the rules of spec/kip848/offsets.py, spec/kip848/groups.py and the version
profiles (spec/kip848/profiles.py): one builder per rule, which tests/test_kip848_rules.py adds
to its table (`OFFSET_SCENARIOS`), and the states they start from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from kip848_helpers import CONFIG, REF, answer, beat, first, join, only, send, tps

from groupspec.spec.kip848 import (
    ConsumerGroupCoordinatorSpec,
    ConsumerGroupsState,
    Outcome,
    RequestArrived,
)
from groupspec.spec.kip848.events import Kip848Request
from groupspec.spec.kip848.profiles import KAFKA_3_9, KAFKA_4_0
from groupspec.spec.kip848.state import CommittedOffset
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    ListGroupsRequest,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    TopicPartition,
)
from groupspec.vocabulary.responses import (
    DeleteGroupsResponse,
    ListGroupsResponse,
    OffsetCommitResponse,
    OffsetFetchResponse,
)

SPEC_4_3 = ConsumerGroupCoordinatorSpec(CONFIG)
SPEC_4_0 = ConsumerGroupCoordinatorSpec(replace(CONFIG, kafka_version=KAFKA_4_0))
SPEC_3_9 = ConsumerGroupCoordinatorSpec(replace(CONFIG, kafka_version=KAFKA_3_9))
EMPTY = SPEC_4_3.initial_state()


def ask(
    state: ConsumerGroupsState,
    request: Kip848Request,
    spec: ConsumerGroupCoordinatorSpec = SPEC_4_3,
) -> Outcome:
    """The one outcome of a request that takes no choice."""
    return only(spec.step(state, RequestArrived(REF, request), 0))


def commit(
    member_id: str, epoch: int, *partitions: str, group_id: str = "g", api_version: int = 9
) -> OffsetCommitRequest:
    """An OffsetCommit of offset 7 for each named partition ('t0-1')."""
    entries = tuple(
        OffsetCommitPartition(p.topic, p.partition, 7) for p in sorted(tps(*partitions))
    )
    return OffsetCommitRequest(group_id, entries, epoch, member_id, api_version=api_version)


def commit_error(outcome: Outcome) -> ErrorCode:
    """The one error every partition of a commit's answer carries."""
    (reply,) = outcome.responses
    assert isinstance(reply.body, OffsetCommitResponse)
    errors = {entry.error_code for entry in reply.body.partitions}
    assert len(errors) == 1, errors
    return errors.pop()


def fetch_answer(outcome: Outcome) -> OffsetFetchResponse:
    (reply,) = outcome.responses
    assert isinstance(reply.body, OffsetFetchResponse)
    return reply.body


def two_stable(spec: ConsumerGroupCoordinatorSpec = SPEC_4_3) -> ConsumerGroupsState:
    """a (t0-0 t1-0, assigned at epoch 2) and b (t0-1, assigned at epoch 3), both Stable at
    epoch 3."""
    state = only(send(EMPTY, join("a"), spec=spec)).state
    outcomes = send(state, join("b"), spec=spec)
    state = first(outcomes, a=tps("t0-0", "t1-0"), b=tps("t0-1")).state
    state = only(send(state, beat("a", 2, "t0-0", "t0-1", "t1-0"), spec=spec)).state
    state = only(send(state, beat("a", 2, "t0-0", "t1-0"), spec=spec)).state
    return only(send(state, beat("b", 3), spec=spec)).state


def emptied() -> ConsumerGroupsState:
    """Group g after its only member left: Empty."""
    state = only(send(EMPTY, join("a"))).state
    left = replace(beat("a", -1), subscribed_topic_names=None, topic_partitions=None)
    return only(send(state, left)).state


def refused(outcome: Outcome, before: ConsumerGroupsState, error: ErrorCode) -> Outcome:
    assert commit_error(outcome) is error
    assert outcome.state == before
    return outcome


def accepted(outcome: Outcome, group_id: str = "g") -> Outcome:
    assert commit_error(outcome) is ErrorCode.NONE
    assert outcome.state.offsets(group_id)
    return outcome


# -- profiles --------------------------------------------------------------------------------


def heartbeat_unsupported_version() -> Outcome:
    outcome = only(send(EMPTY, join("a", api_version=1), spec=SPEC_3_9))
    assert answer(outcome).error_code is ErrorCode.UNSUPPORTED_VERSION
    assert outcome.state == EMPTY
    return outcome


def assignment_no_interval() -> Outcome:
    spec = ConsumerGroupCoordinatorSpec(
        replace(CONFIG, kafka_version=KAFKA_4_0, assignment_interval_ms=1_000)
    )
    state = only(send(EMPTY, join("a"), now_ms=5, spec=spec)).state
    outcome = send(state, join("b"), now_ms=10, spec=spec)[0]
    (group,) = outcome.state.iter_groups()
    assert (group.group_epoch, group.assignment_epoch) == (3, 3)
    return outcome


# -- OffsetCommit ----------------------------------------------------------------------------


def commit_unknown_group() -> Outcome:
    return refused(ask(EMPTY, commit("a", 1, "t0-0")), EMPTY, ErrorCode.GROUP_ID_NOT_FOUND)


def commit_unknown_group_old_version() -> Outcome:
    request = commit("a", 1, "t0-0", api_version=8)
    return refused(ask(EMPTY, request), EMPTY, ErrorCode.ILLEGAL_GENERATION)


def commit_admin_empty_group() -> Outcome:
    outcome = accepted(ask(emptied(), commit("", -1, "t0-0")))
    assert outcome.state.offsets("g") == {TopicPartition("t0", 0): CommittedOffset(7)}
    return outcome


def commit_admin_non_empty_group() -> Outcome:
    state = two_stable()
    return refused(ask(state, commit("", -1, "t0-0")), state, ErrorCode.UNKNOWN_MEMBER_ID)


def commit_unknown_member() -> Outcome:
    state = two_stable()
    return refused(ask(state, commit("z", 3, "t0-0")), state, ErrorCode.UNKNOWN_MEMBER_ID)


def commit_unsupported_version() -> Outcome:
    state = two_stable()
    request = commit("a", 3, "t0-0", api_version=8)
    return refused(ask(state, request), state, ErrorCode.UNSUPPORTED_VERSION)


def commit_epoch_matches() -> Outcome:
    return accepted(ask(two_stable(), commit("a", 3, "t0-0", "t1-0")))


def commit_epoch_mismatch() -> Outcome:
    state = two_stable(SPEC_4_0)
    return refused(
        ask(state, commit("a", 2, "t0-0"), SPEC_4_0), state, ErrorCode.STALE_MEMBER_EPOCH
    )


def commit_epoch_newer() -> Outcome:
    state = two_stable()
    return refused(ask(state, commit("a", 4, "t0-0")), state, ErrorCode.STALE_MEMBER_EPOCH)


def commit_assigned_by_epoch() -> Outcome:
    return accepted(ask(two_stable(), commit("a", 2, "t0-0", "t1-0")))


def commit_partition_not_owned() -> Outcome:
    state = two_stable()
    return refused(ask(state, commit("a", 2, "t0-1")), state, ErrorCode.STALE_MEMBER_EPOCH)


def commit_assigned_later() -> Outcome:
    state = two_stable()
    return refused(ask(state, commit("b", 2, "t0-1")), state, ErrorCode.STALE_MEMBER_EPOCH)


# -- OffsetFetch -----------------------------------------------------------------------------


def committed() -> ConsumerGroupsState:
    """two_stable with a's offset 7 committed for t0-0 and t1-0."""
    return accepted(ask(two_stable(), commit("a", 3, "t0-0", "t1-0"))).state


def fetch_unknown_group() -> Outcome:
    outcome = ask(committed(), OffsetFetchRequest("h", (TopicPartition("t0", 0),)))
    (entry,) = fetch_answer(outcome).partitions
    assert (entry.committed_offset, entry.error_code) == (-1, ErrorCode.NONE)
    return outcome


def fetch_without_member() -> Outcome:
    outcome = ask(committed(), OffsetFetchRequest("g", None))
    assert {e.committed_offset for e in fetch_answer(outcome).partitions} == {7}
    return outcome


def fetch_unknown_member() -> Outcome:
    outcome = ask(committed(), OffsetFetchRequest("g", None, member_id="z", member_epoch=3))
    assert fetch_answer(outcome).error_code is ErrorCode.UNKNOWN_MEMBER_ID
    return outcome


def fetch_stale_member_epoch() -> Outcome:
    outcome = ask(committed(), OffsetFetchRequest("g", None, member_id="a", member_epoch=2))
    assert fetch_answer(outcome).error_code is ErrorCode.STALE_MEMBER_EPOCH
    return outcome


def fetch_member() -> Outcome:
    request = OffsetFetchRequest("g", (TopicPartition("t0", 0),), member_id="a", member_epoch=3)
    outcome = ask(committed(), request)
    (entry,) = fetch_answer(outcome).partitions
    assert entry.committed_offset == 7
    return outcome


# -- ListGroups and DeleteGroups -------------------------------------------------------------


def list_listed() -> Outcome:
    outcome = ask(two_stable(), ListGroupsRequest(states_filter=("STABLE",)))
    (reply,) = outcome.responses
    assert isinstance(reply.body, ListGroupsResponse)
    (listed,) = reply.body.groups
    assert (listed.group_id, listed.group_state, listed.group_type) == ("g", "Stable", "consumer")
    return outcome


def list_filtered_out() -> Outcome:
    outcome = ask(two_stable(), ListGroupsRequest(types_filter=("classic",)))
    (reply,) = outcome.responses
    assert isinstance(reply.body, ListGroupsResponse) and reply.body.groups == ()
    return outcome


def delete_result(outcome: Outcome) -> ErrorCode:
    (reply,) = outcome.responses
    assert isinstance(reply.body, DeleteGroupsResponse)
    (result,) = reply.body.results
    return result.error_code


def delete_unknown_group() -> Outcome:
    outcome = ask(EMPTY, DeleteGroupsRequest(("g",)))
    assert delete_result(outcome) is ErrorCode.GROUP_ID_NOT_FOUND
    return outcome


def delete_non_empty() -> Outcome:
    state = two_stable()
    outcome = ask(state, DeleteGroupsRequest(("g",)))
    assert delete_result(outcome) is ErrorCode.NON_EMPTY_GROUP and outcome.state == state
    return outcome


def delete_deleted() -> Outcome:
    state = commit_admin_empty_group().state
    outcome = ask(state, DeleteGroupsRequest(("g",)))
    assert delete_result(outcome) is ErrorCode.NONE
    assert outcome.state.group("g") is None and outcome.state.offsets("g") == {}
    assert outcome.state.groups_by_id == () and outcome.state.offsets_by_group == ()
    return outcome


OFFSET_SCENARIOS: dict[str, Callable[[], Outcome]] = {
    "cg_heartbeat.unsupported_version": heartbeat_unsupported_version,
    "cg_assignment.no_interval": assignment_no_interval,
    "cg_offset_commit.unknown_group": commit_unknown_group,
    "cg_offset_commit.unknown_group_old_version": commit_unknown_group_old_version,
    "cg_offset_commit.admin_empty_group": commit_admin_empty_group,
    "cg_offset_commit.admin_non_empty_group": commit_admin_non_empty_group,
    "cg_offset_commit.unknown_member": commit_unknown_member,
    "cg_offset_commit.unsupported_version": commit_unsupported_version,
    "cg_offset_commit.epoch_matches": commit_epoch_matches,
    "cg_offset_commit.epoch_mismatch": commit_epoch_mismatch,
    "cg_offset_commit.epoch_newer": commit_epoch_newer,
    "cg_offset_commit.assigned_by_epoch": commit_assigned_by_epoch,
    "cg_offset_commit.partition_not_owned": commit_partition_not_owned,
    "cg_offset_commit.assigned_later": commit_assigned_later,
    "cg_offset_fetch.unknown_group": fetch_unknown_group,
    "cg_offset_fetch.without_member": fetch_without_member,
    "cg_offset_fetch.unknown_member": fetch_unknown_member,
    "cg_offset_fetch.stale_member_epoch": fetch_stale_member_epoch,
    "cg_offset_fetch.member": fetch_member,
    "cg_list_groups.listed": list_listed,
    "cg_list_groups.filtered_out": list_filtered_out,
    "cg_delete_groups.unknown_group": delete_unknown_group,
    "cg_delete_groups.non_empty": delete_non_empty,
    "cg_delete_groups.deleted": delete_deleted,
}
