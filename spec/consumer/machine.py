"""The consumer specification's entry point: `ConsumerSpec.step(state, event)`.

The consumer is deterministic, so a step has exactly one outcome. Which events are enabled in a
state is explicit (`enabled_events`, `is_enabled`); stepping with any other event raises
`ConsumerEventNotEnabledError`. Responses are matched to requests by correlation id; once the
consumer failed fatally or closed, late responses are accepted and ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from groupspec.vocabulary.errors import InputError, InvalidConfigError
from groupspec.vocabulary.responses import (
    FindCoordinatorResponse,
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    SyncGroupResponse,
)

from ..assignment import Cluster, RebalanceProtocol
from ..assignors.base import Assignor
from .commit import on_offset_commit_response, request_commit
from .config import ConsumerConfig
from .context import ConsumerSetup, StepContext
from .coordinator_discovery import mark_coordinator_unknown, on_find_coordinator_response
from .events import (
    Close,
    CommitRequested,
    ConsumerEvent,
    ConsumerEventNotEnabledError,
    Disconnected,
    HeartbeatDue,
    MetadataChanged,
    Poll,
    PollTimeoutExpired,
    ResponseReceived,
    SessionTimeoutExpired,
    SubscriptionChanged,
)
from .heartbeat import on_heartbeat_response, on_session_timeout, send_heartbeat
from .join import on_join_group_response
from .leave import on_close, on_leave_group_response, on_poll_timeout
from .outcome import ConsumerOutcome, Effects
from .poll import on_poll
from .protocol_selection import select_rebalance_protocol
from .rules import (
    CLIENT_COORDINATOR_DISCONNECTED,
    CLIENT_METADATA_UPDATED,
    CLIENT_RESPONSE_IGNORED_AFTER_END,
    CLIENT_SUBSCRIPTION_CHANGED,
    CLIENT_SUBSCRIPTION_UNCHANGED,
    CONSUMER_RULES,
    ConsumerRule,
)
from .state import ConsumerState, InFlight, RequestKind
from .sync import on_sync_group_response

ResponseHandler = Callable[[StepContext, ConsumerState, InFlight, Any], ConsumerState]

# The rules `Effects.fire` accepts: the consumer's (consumer/rules.py) and nothing else.
_KNOWN_RULES: frozenset[ConsumerRule] = frozenset(CONSUMER_RULES)

# For each request kind, the response body it expects and the handler that judges it.
_RESPONSE_HANDLERS: Mapping[RequestKind, tuple[type, ResponseHandler]] = {
    RequestKind.FIND_COORDINATOR: (FindCoordinatorResponse, on_find_coordinator_response),
    RequestKind.JOIN_GROUP: (JoinGroupResponse, on_join_group_response),
    RequestKind.SYNC_GROUP: (SyncGroupResponse, on_sync_group_response),
    RequestKind.HEARTBEAT: (HeartbeatResponse, on_heartbeat_response),
    RequestKind.LEAVE_GROUP: (LeaveGroupResponse, on_leave_group_response),
    RequestKind.OFFSET_COMMIT: (OffsetCommitResponse, on_offset_commit_response),
}


def _registry_lookup(name: str) -> Assignor:
    # Imported on use: the assignor registry is a sibling package built alongside this one.
    from ..assignors.registry import assignor_named

    return assignor_named(name)


class ConsumerSpec:
    """Kafka's classic consumer group client (ConsumerCoordinator) as a state machine.

    `assignors` maps names to assignor objects; by default each configured name is looked up in
    the assignor registry. The rebalance protocol is selected once, here.
    """

    def __init__(
        self, config: ConsumerConfig, assignors: Mapping[str, Assignor] | None = None
    ) -> None:
        if not isinstance(config, ConsumerConfig):
            raise InvalidConfigError(f"expected a ConsumerConfig, got {config!r}")
        resolved = []
        for name in config.assignors:
            try:
                assignor = assignors[name] if assignors is not None else _registry_lookup(name)
            except (KeyError, InputError) as missing:
                raise InvalidConfigError(f"no assignor named {name!r}") from missing
            if assignor.name != name:
                raise InvalidConfigError(f"assignor for {name!r} calls itself {assignor.name!r}")
            resolved.append(assignor)
        self.config = config
        self.setup = ConsumerSetup(
            config, tuple(resolved), select_rebalance_protocol(tuple(resolved))
        )

    @property
    def protocol(self) -> RebalanceProtocol:
        """The rebalance protocol this consumer follows (EAGER or COOPERATIVE)."""
        return self.setup.protocol

    def initial_state(self, cluster: Cluster | None = None) -> ConsumerState:
        """A consumer that has subscribed but not yet polled; `cluster` is its first metadata."""
        return ConsumerState(
            subscription=self.config.subscribed_topics,
            cluster=cluster if cluster is not None else Cluster(()),
        )

    def enabled_events(self, state: ConsumerState) -> tuple[ConsumerEvent, ...]:
        """The parameterless events enabled in `state` (responses, commits, subscription and
        metadata changes carry data and are enabled as `is_enabled` says)."""
        candidates: tuple[ConsumerEvent, ...] = (
            Poll(),
            HeartbeatDue(),
            SessionTimeoutExpired(),
            PollTimeoutExpired(),
            Close(),
            Disconnected(),
        )
        return tuple(event for event in candidates if self._refusal(state, event) is None)

    def is_enabled(self, state: ConsumerState, event: ConsumerEvent) -> bool:
        """Whether `event` may happen in `state`."""
        return self._refusal(state, event) is None

    def step(self, state: ConsumerState, event: ConsumerEvent) -> ConsumerOutcome:
        """The consumer's reaction to `event` in `state`."""
        refusal = self._refusal(state, event)
        if refusal is not None:
            raise ConsumerEventNotEnabledError(refusal)
        effects = Effects(_KNOWN_RULES)
        ctx = StepContext(self.setup, effects)
        return effects.outcome(self._dispatch(ctx, state, event))

    def _refusal(self, state: ConsumerState, event: object) -> str | None:
        """Why `event` is not enabled in `state`, or None when it is."""
        if isinstance(event, ResponseReceived):
            sent = state.request(event.correlation_id)
            if sent is None:
                return f"no request is in flight under correlation id {event.correlation_id}"
            expected, _ = _RESPONSE_HANDLERS[sent.kind]
            if not isinstance(event.body, expected):
                raise InputError(
                    f"correlation id {event.correlation_id} is a {sent.kind.value} request, "
                    f"but the response is a {type(event.body).__name__}"
                )
            return None
        if isinstance(event, Disconnected):
            if not state.coordinator_known and not state.in_flight:
                return "no connection to lose: no coordinator and nothing in flight"
            return None
        if state.closed:
            return f"the consumer is closed; {type(event).__name__} cannot happen"
        if isinstance(event, Close):
            return None
        if state.failure is not None:
            return f"the consumer failed with {state.failure.kind}; only close() remains"
        if isinstance(event, (Poll, CommitRequested, SubscriptionChanged, MetadataChanged)):
            return None
        if isinstance(event, (HeartbeatDue, SessionTimeoutExpired, PollTimeoutExpired)):
            if not state.heartbeat_thread_active:
                return f"no heartbeat thread runs in {state.member_state.value}"
            if not state.coordinator_known:
                return "the heartbeat thread has no coordinator to talk to"
            if isinstance(event, HeartbeatDue) and state.in_flight_of(RequestKind.HEARTBEAT):
                return "a heartbeat is already in flight"
            return None
        raise InputError(f"not a consumer event: {event!r}")

    def _dispatch(
        self, ctx: StepContext, state: ConsumerState, event: ConsumerEvent
    ) -> ConsumerState:
        if isinstance(event, ResponseReceived):
            return _on_response(ctx, state, event)
        if isinstance(event, Disconnected):
            ctx.fire(CLIENT_COORDINATOR_DISCONNECTED)
            return mark_coordinator_unknown(ctx, state)
        if isinstance(event, Close):
            return on_close(ctx, state)
        if isinstance(event, Poll):
            return on_poll(ctx, state)
        if isinstance(event, HeartbeatDue):
            return send_heartbeat(ctx, state)
        if isinstance(event, SessionTimeoutExpired):
            return on_session_timeout(ctx, state)
        if isinstance(event, PollTimeoutExpired):
            return on_poll_timeout(ctx, state)
        if isinstance(event, CommitRequested):
            return request_commit(ctx, state, event.offsets)
        if isinstance(event, SubscriptionChanged):
            return _on_subscription_changed(ctx, state, event)
        if isinstance(event, MetadataChanged):
            return _on_metadata_changed(ctx, state, event)
        raise InputError(f"not a consumer event: {event!r}")


def _on_response(ctx: StepContext, state: ConsumerState, event: ResponseReceived) -> ConsumerState:
    sent = state.request(event.correlation_id)
    assert sent is not None  # _refusal checked it
    state = state.without_request(event.correlation_id)
    if state.closed or state.failure is not None:
        ctx.fire(CLIENT_RESPONSE_IGNORED_AFTER_END)
        return state
    _, handler = _RESPONSE_HANDLERS[sent.kind]
    return handler(ctx, state, sent, event.body)


def _on_subscription_changed(
    ctx: StepContext, state: ConsumerState, event: SubscriptionChanged
) -> ConsumerState:
    topics = event.topics
    if (
        not isinstance(topics, tuple)
        or not topics
        or not all(isinstance(t, str) and t for t in topics)
    ):
        raise InputError(f"subscribe() needs a non-empty tuple of topic names, got {topics!r}")
    subscription = tuple(sorted(set(topics)))
    # Kafka compares with the subscription of the last JoinGroup on the next poll.
    ctx.fire(
        CLIENT_SUBSCRIPTION_CHANGED
        if subscription != state.subscription
        else CLIENT_SUBSCRIPTION_UNCHANGED
    )
    return replace(state, subscription=subscription)


def _on_metadata_changed(
    ctx: StepContext, state: ConsumerState, event: MetadataChanged
) -> ConsumerState:
    if not isinstance(event.cluster, Cluster):
        raise InputError(f"metadata must be a Cluster, got {event.cluster!r}")
    # Only the leader watches partition counts; the next poll rejoins if they changed.
    ctx.fire(CLIENT_METADATA_UPDATED)
    return replace(state, cluster=event.cluster)
