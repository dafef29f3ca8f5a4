"""One scenario per regular-expression rule of the KIP-848 coordinator (spec/kip848/regex.py,
docs/protocol.md §12.18), for tests/test_kip848_rules.py's catalogue and the behaviour tests of
tests/test_kip848_regex.py. The configured topics are t0 (two partitions) and t1 (one)."""

from __future__ import annotations

from collections.abc import Callable

from kip848_helpers import SPEC, beat, only, send

from groupspec.spec.kip848 import ConsumerGroupsState, Outcome
from groupspec.spec.kip848.events import (
    CoordinatorLoaded,
    CoordinatorLoadStarted,
    CoordinatorUnloaded,
    RegexResolutionCompleted,
)
from groupspec.vocabulary.consumer_groups import (
    LEAVE_GROUP_MEMBER_EPOCH,
    ConsumerGroupHeartbeatRequest,
)

EMPTY = SPEC.initial_state()
RESOLVED = RegexResolutionCompleted("g")
# Past GroupMetadataManager's 10 s between two resolutions, and past the refresh interval.
AFTER_MIN_INTERVAL_MS = 20_000
AFTER_REFRESH_INTERVAL_MS = 700_000


def regex_join(
    member_id: str, regex: str, names: tuple[str, ...] | None = None
) -> ConsumerGroupHeartbeatRequest:
    """A full join (epoch 0) subscribing with `regex` (and `names`, none by default)."""
    return ConsumerGroupHeartbeatRequest(
        "g",
        member_id,
        0,
        rebalance_timeout_ms=30_000,
        subscribed_topic_names=names,
        subscribed_topic_regex=regex,
        topic_partitions=(),
    )


def subscribe(member_id: str, epoch: int, regex: str) -> ConsumerGroupHeartbeatRequest:
    """A heartbeat changing the member's regular expression to `regex` ("" drops it)."""
    return ConsumerGroupHeartbeatRequest("g", member_id, epoch, subscribed_topic_regex=regex)


def a_joined_with_regex(regex: str = "t0") -> Outcome:
    """a joins subscribing with `regex` only: a resolution starts."""
    return only(send(EMPTY, regex_join("a", regex), 0))


def a_resolved(regex: str = "t0") -> ConsumerGroupsState:
    """a's expression resolved at 1 s (the group epoch bumped), then a reconciled."""
    state = only(send(a_joined_with_regex(regex).state, RESOLVED, 1_000)).state
    return only(send(state, beat("a", _epoch_of(state, "a")), 1_100)).state


def invalid() -> Outcome:
    return only(send(EMPTY, regex_join("a", "t(?=0)")))


def subscribed_unresolved() -> Outcome:
    return a_joined_with_regex()


def resolution_started() -> Outcome:
    return a_joined_with_regex()


def resolved_changed() -> Outcome:
    return only(send(a_joined_with_regex().state, RESOLVED, 1_000))


def resolved_unchanged() -> Outcome:
    # Past the refresh interval a heartbeat starts a new resolution, which finds the same topics.
    state = a_resolved()
    epoch = _epoch_of(state, "a")
    state = only(send(state, beat("a", epoch, "t0-0", "t0-1"), AFTER_REFRESH_INTERVAL_MS)).state
    return only(send(state, RESOLVED, AFTER_REFRESH_INTERVAL_MS + 100))


def resolution_dropped() -> Outcome:
    # a leaves before its expression is resolved: the result finds no subscriber.
    state = a_joined_with_regex().state
    left = ConsumerGroupHeartbeatRequest("g", "a", LEAVE_GROUP_MEMBER_EPOCH)
    state = only(send(state, left, 500)).state
    return only(send(state, RESOLVED, 1_000))


def subscribed_resolved() -> Outcome:
    # The target splits t0 between a and b either way (the assignor's choice): the first.
    return send(a_resolved(), regex_join("b", "t0"), 2_000)[0]


def unsubscribed() -> Outcome:
    state = a_resolved()
    return only(send(state, subscribe("a", _epoch_of(state, "a"), ""), 2_000))


def tombstone() -> Outcome:
    return unsubscribed()


def record_regex() -> Outcome:
    return resolved_changed()


def replay_regex() -> Outcome:
    state = only(send(a_resolved(), CoordinatorUnloaded())).state
    state = only(send(state, CoordinatorLoadStarted())).state
    return only(send(state, CoordinatorLoaded()))


def _epoch_of(state: ConsumerGroupsState, member_id: str) -> int:
    group = state.group("g")
    member = None if group is None else group.member(member_id)
    assert member is not None
    return member.member_epoch


REGEX_SCENARIOS: dict[str, Callable[[], Outcome]] = {
    "cg_regex.invalid": invalid,
    "cg_regex.subscribed_unresolved": subscribed_unresolved,
    "cg_regex.subscribed_resolved": subscribed_resolved,
    "cg_regex.unsubscribed": unsubscribed,
    "cg_regex.tombstone": tombstone,
    "cg_regex.resolution_started": resolution_started,
    "cg_regex.resolved_changed": resolved_changed,
    "cg_regex.resolved_unchanged": resolved_unchanged,
    "cg_regex.resolution_dropped": resolution_dropped,
    "cg_record.regex": record_regex,
    "cg_replay.regex": replay_regex,
}
