"""Differential conformance of the optimized consumer-protocol coordinator
(`groupspec.impl.kip848`) against the specification (`groupspec.spec.kip848`).

The spec is a relation: for a state and an input it returns every outcome Kafka allows (the
preferred assignor on a tie, each target assignment the assignor may compute). The impl is a
function: it takes one. `Kip848Differential` feeds the same input to both, keeps the spec
outcome whose responses and state projection equal the impl's, and raises
`Kip848ConformanceError` when none does.

The projection compares, per group: the group epoch, the assignment epoch and its timestamp,
the group state; each member's instance and rack ids, rebalance timeout, subscription, server
assignor, epoch and previous epoch, reconciliation state, assigned and pending partitions; the
target assignment; every armed session and rebalance timer with its deadline (and the epoch a
rebalance timer was armed at); and, in the differential runs (not in the vectors' stored
projection), each member's KIP-1251 assignment epochs, every group's committed offsets, each
member's regular expression, and each group's resolved expressions (topics and time) and the
expressions of a resolution under way. Responses are compared as they are (both sides speak the
vocabulary). A resolution's completion is an input of both: the spec's `RegexResolutionCompleted`
and the impl's own, which its `advance` fires too (queued due at once). Member ids a v0 join leaves to the coordinator are spelled as the spec spells them
(`member-<n>`), by handing the impl a counter as its id source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import count
from typing import Any

from groupspec.impl.clock import ManualClock
from groupspec.impl.kip848 import ConsumerGroupConfig as ImplConfig
from groupspec.impl.kip848 import ConsumerGroupCoordinator, Topic
from groupspec.impl.kip848 import RebalanceTimeoutExpired as ImplRebalanceTimeout
from groupspec.impl.kip848 import RegexResolutionCompleted as ImplRegexResolved
from groupspec.impl.kip848 import SessionTimeoutExpired as ImplSessionTimeout
from groupspec.impl.kip848.state import Group as ImplGroup
from groupspec.spec.events import EventNotEnabledError
from groupspec.spec.kip848 import (
    ConsumerGroupConfig,
    ConsumerGroupCoordinatorSpec,
    ConsumerGroupsState,
    Outcome,
    RebalanceTimeoutExpired,
    RequestArrived,
    SessionTimeoutExpired,
)
from groupspec.spec.kip848.events import ConsumerGroupInput, RegexResolutionCompleted
from groupspec.spec.kip848.state import ConsumerGroup
from groupspec.spec.kip848.timers import armed_timers
from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
)
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    ListGroupsRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    RequestRef,
    TopicPartition,
)

Projection = tuple[Any, ...]
# The requests impl/kip848 serves (the classic members' JoinGroup and friends it does not).
SERVED_REQUESTS = (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupDescribeRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    ListGroupsRequest,
    DeleteGroupsRequest,
)


class Kip848ConformanceError(AssertionError):
    """The impl answered or changed state in a way no spec outcome allows."""


def impl_config(config: ConsumerGroupConfig) -> ImplConfig:
    """The impl's settings equal to the spec's `config`."""
    return ImplConfig(
        session_timeout_ms=config.session_timeout_ms,
        heartbeat_interval_ms=config.heartbeat_interval_ms,
        max_size=config.max_size,
        assignors=config.assignors,
        assignment_interval_ms=config.assignment_interval_ms,
        regex_refresh_interval_ms=config.regex_refresh_interval_ms,
        topics=tuple(Topic(t.name, t.topic_id, t.partitions) for t in config.topics),
    )


def spec_member_ids() -> Callable[[], str]:
    """A member-id source spelling ids as the spec does: member-0, member-1, ..."""
    numbers = count()
    return lambda: f"member-{next(numbers)}"


def _parts(partitions: frozenset[TopicPartition]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((p.topic, p.partition) for p in partitions))


def _spec_group(group: ConsumerGroup) -> Projection:
    members = tuple(
        (
            m.member_id,
            m.instance_id,
            m.rack_id,
            m.rebalance_timeout_ms,
            tuple(sorted(m.subscribed_topic_names)),
            m.server_assignor,
            m.member_epoch,
            m.previous_member_epoch,
            m.state.value,
            _parts(m.assigned),
            _parts(m.pending_revocation),
        )
        for m in group.iter_members()
    )
    return (
        group.group_id,
        group.group_epoch,
        group.assignment_epoch,
        group.assignment_timestamp_ms,
        group.state.value,
        members,
        tuple((member_id, _parts(parts)) for member_id, parts in group.target_by_id),
        tuple(sorted(group.session_deadlines)),
        tuple(sorted(group.rebalance_deadlines)),
    )


def _impl_group(group: ImplGroup) -> Projection:
    members = tuple(
        (
            m.member_id,
            m.instance_id,
            m.rack_id,
            m.rebalance_timeout_ms,
            tuple(sorted(m.subscribed_topic_names)),
            m.server_assignor,
            m.member_epoch,
            m.previous_member_epoch,
            m.state.value,
            _parts(m.assigned),
            _parts(m.pending_revocation),
        )
        for _, m in sorted(group.members.items())
    )
    return (
        group.group_id,
        group.group_epoch,
        group.assignment_epoch,
        group.assignment_timestamp_ms,
        group.state.value,
        members,
        tuple((member_id, _parts(parts)) for member_id, parts in sorted(group.target.items())),
        tuple(sorted(group.session_deadlines.items())),
        tuple(sorted(group.rebalance_deadlines.items())),
    )


def spec_projection(state: ConsumerGroupsState) -> Projection:
    """What is compared of the spec's state (the vectors store this)."""
    return tuple(_spec_group(group) for group in state.iter_groups())


def impl_projection(coordinator: ConsumerGroupCoordinator) -> Projection:
    """What is compared of the impl's state (the vectors store this)."""
    return tuple(_impl_group(group) for group in coordinator.groups())


def _offsets(by_group: Any) -> Projection:
    return tuple(
        (group_id, tuple(sorted((p.topic, p.partition, o) for p, o in dict(offsets).items())))
        for group_id, offsets in by_group
    )


def _spec_offsets(state: ConsumerGroupsState) -> Projection:
    """The spec's committed offsets as the impl reports them: (offset, leader epoch, metadata)."""
    return _offsets(
        (group_id, {p: (c.offset, c.leader_epoch, c.metadata) for p, c in offsets})
        for group_id, offsets in state.offsets_by_group
    )


def spec_full_projection(state: ConsumerGroupsState) -> Projection:
    """`spec_projection` with each member's KIP-1251 assignment epochs, every group's
    committed offsets, and the regular expressions (`_spec_regexes`): the differential runs
    compare these too."""
    epochs = tuple(
        (m.member_id, tuple(sorted((p.topic, p.partition, e) for p, e in m.assignment_epochs)))
        for group in state.iter_groups()
        for m in group.iter_members()
    )
    return spec_projection(state), epochs, _spec_offsets(state), _spec_regexes(state)


def _spec_regexes(state: ConsumerGroupsState) -> Projection:
    """Per group: each member's expression, each resolved expression with its topics and time,
    and the expressions of the resolution under way (None: none is)."""
    return tuple(
        (
            group.group_id,
            tuple((m.member_id, m.subscribed_topic_regex) for m in group.iter_members()),
            tuple(
                (r.regex, tuple(sorted(r.topics)), r.timestamp_ms) for r in group.resolved_regexes
            ),
            group.regex_resolution,
        )
        for group in state.iter_groups()
    )


def _impl_regexes(coordinator: ConsumerGroupCoordinator) -> Projection:
    """`_spec_regexes` of the impl."""
    return tuple(
        (
            group.group_id,
            tuple((i, m.subscribed_topic_regex) for i, m in sorted(group.members.items())),
            tuple(
                (regex, tuple(sorted(r.topics)), r.timestamp_ms)
                for regex, r in sorted(group.resolved_regexes.items())
            ),
            group.regex_resolution,
        )
        for group in coordinator.groups()
    )


def impl_full_projection(coordinator: ConsumerGroupCoordinator) -> Projection:
    """`impl_projection` with the assignment epochs and committed offsets."""
    epochs = tuple(
        (
            m.member_id,
            tuple(sorted((p.topic, p.partition, e) for p, e in m.assignment_epochs.items())),
        )
        for group in coordinator.groups()
        for _, m in sorted(group.members.items())
    )
    return (
        impl_projection(coordinator),
        epochs,
        _offsets(coordinator.committed_offsets().items()),
        _impl_regexes(coordinator),
    )


def impl_timer(
    event: SessionTimeoutExpired | RebalanceTimeoutExpired | RegexResolutionCompleted,
) -> Any:
    """The impl's event for the spec's timer or resolution `event`."""
    if isinstance(event, RegexResolutionCompleted):
        return ImplRegexResolved(event.group_id)
    if isinstance(event, SessionTimeoutExpired):
        return ImplSessionTimeout(event.group_id, event.member_id)
    return ImplRebalanceTimeout(event.group_id, event.member_id)


def spec_event(event: Any) -> ConsumerGroupInput:
    """The spec's input for an event the impl fired (a timer or a resolution's completion)."""
    if isinstance(event, ImplRegexResolved):
        return RegexResolutionCompleted(event.group_id)
    if isinstance(event, ImplSessionTimeout):
        return SessionTimeoutExpired(event.group_id, event.member_id)
    return RebalanceTimeoutExpired(event.group_id, event.member_id)


def outcome_key(outcome: Outcome) -> tuple[Any, Projection]:
    """An outcome as compared with the impl: its responses by ref, and its state's projection."""
    return _responses((reply.ref, reply.body) for reply in outcome.responses), spec_projection(
        outcome.state
    )


def full_outcome_key(outcome: Outcome) -> tuple[Any, Projection]:
    """`outcome_key` with the full projection (`spec_full_projection`)."""
    pairs = ((reply.ref, reply.body) for reply in outcome.responses)
    return _responses(pairs), spec_full_projection(outcome.state)


def _responses(pairs: Any) -> tuple[Any, ...]:
    return tuple(sorted(((str(ref), body) for ref, body in pairs), key=lambda item: item[0]))


@dataclass
class StepReport:
    """What one differential step saw: the allowed outcomes and the one the impl took."""

    allowed: int
    taken: Outcome


class Kip848Differential:
    """The spec and the impl side by side, fed the same inputs at the same times."""

    def __init__(self, config: ConsumerGroupConfig | None = None) -> None:
        self.spec = ConsumerGroupCoordinatorSpec(config)
        self.state = self.spec.initial_state()
        self.clock = ManualClock(0)
        self.impl = ConsumerGroupCoordinator(
            impl_config(self.spec.config), clock=self.clock, new_member_id=spec_member_ids()
        )

    def step(self, event: ConsumerGroupInput, now_ms: int) -> StepReport:
        """Apply `event` at `now_ms` to both; raise `Kip848ConformanceError` on a divergence."""
        outcomes = self.spec.step(self.state, event, now_ms)
        self.clock.set(max(now_ms, self.clock.now_ms()))
        if isinstance(event, RequestArrived):
            request = event.request
            if not isinstance(request, SERVED_REQUESTS):
                raise TypeError(f"impl/kip848 does not serve {type(request).__name__}")
            self.impl.handle(event.ref, request)
        elif isinstance(
            event, (SessionTimeoutExpired, RebalanceTimeoutExpired, RegexResolutionCompleted)
        ):
            self.impl.fire(impl_timer(event))
        else:
            # impl/kip848 keeps no log: a failover (spec/kip848/failover.py) is not served yet.
            raise TypeError(f"impl/kip848 does not serve {type(event).__name__}")
        assert self.impl.outbox is not None
        actual = (_responses(self.impl.outbox.take().items()), impl_full_projection(self.impl))
        for outcome in outcomes:
            if full_outcome_key(outcome) == actual:
                self.state = outcome.state
                return StepReport(len(outcomes), outcome)
        raise Kip848ConformanceError(_difference(event, actual, outcomes))

    def advance_to(self, now_ms: int) -> list[Any]:
        """Move the impl's clock to `now_ms` and let it fire every due timer itself
        (`advance`); the spec fires the same events in the same order. Raise
        `Kip848ConformanceError` if the states then differ or the spec still has a due timer."""
        self.clock.set(max(now_ms, self.clock.now_ms()))
        fired = self.impl.advance()
        for event in fired:
            try:
                (outcome,) = self.spec.step(self.state, spec_event(event), self.clock.now_ms())
            except EventNotEnabledError as error:
                raise Kip848ConformanceError(f"the impl fired {event!r}: {error}") from None
            self.state = outcome.state
        due = [e for e, deadline in armed_timers(self.state) if deadline <= self.clock.now_ms()]
        if due:
            raise Kip848ConformanceError(f"the impl did not fire the due timers {due!r}")
        if impl_full_projection(self.impl) != spec_full_projection(self.state):
            raise Kip848ConformanceError(
                f"after firing {fired!r}: impl {impl_full_projection(self.impl)!r} "
                f"!= spec {spec_full_projection(self.state)!r}"
            )
        return fired


def _difference(event: Any, actual: tuple[Any, Projection], outcomes: tuple[Outcome, ...]) -> str:
    lines = [f"no spec outcome matches the impl after {event!r}", f"  impl: {actual!r}"]
    for number, outcome in enumerate(outcomes[:3], start=1):
        lines.append(f"  allowed {number} ({outcome.rules}): {full_outcome_key(outcome)!r}")
    return "\n".join(lines)


REF = RequestRef("client", 0)
