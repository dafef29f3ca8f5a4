"""A coordinator holding classic groups and consumer-protocol groups side by side, routing each
input by the kind of its group (docs/protocol.md §12.15). Start here for mixed groups.

```python
spec = MixedCoordinatorSpec(ConsumerGroupConfig(migration_policy="bidirectional"))
outcomes = spec.step(spec.initial_state(), Received(ref, join_group), now_ms=0)
```

The classic coordinator (`spec/coordinator.py`) and the consumer-protocol coordinator
(`coordinator.py`) are used unchanged for what is theirs; this layer adds only what Kafka's
`GroupMetadataManager` does across the two kinds: classic requests to a consumer group
(`classic_members.py`), ConsumerGroupHeartbeat to a classic group and the fencing that may turn
a consumer group back into a classic one (`conversion.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from groupspec.vocabulary.consumer_groups import (
    JOIN_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_MEMBER_EPOCH,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.vocabulary.errors import ErrorCode, InputError
from groupspec.vocabulary.group_state import EMPTY
from groupspec.vocabulary.requests import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    Received,
    SyncGroupRequest,
)
from groupspec.vocabulary.responses import Response

from ..config import CoordinatorConfig
from ..coordinator import GroupCoordinatorSpec
from ..coordinator import Input as ClassicInput
from ..errors import UnknownApiError
from ..step import Choice, _Chooser, every_combination
from .classic_members import (
    ClassicJoinTimeoutExpired,
    ClassicSyncTimeoutExpired,
    classic_heartbeat,
    classic_join,
    classic_leave,
    classic_member_timers,
    classic_sync,
    on_classic_timeout,
)
from .config import ConsumerGroupConfig
from .conversion import UpgradeRefused, answer_parked, fence_members, upgrade
from .coordinator import ConsumerGroupCoordinatorSpec
from .events import (
    ConsumerGroupInput,
    RebalanceTimeoutExpired,
    RegexResolutionCompleted,
    RequestArrived,
    SessionTimeoutExpired,
)
from .heartbeat import consumer_group_heartbeat, invalid_request_reason
from .mixed_rules import (
    CG_CLASSIC_EMPTY_CONSUMER_GROUP_REPLACED,
    CG_CONVERT_EMPTY_CLASSIC_REPLACED,
    CG_CONVERT_NOT_A_CONSUMER_GROUP,
    CG_CONVERT_UPGRADE_JOIN_REFUSED,
)
from .mixed_state import GroupKind, MixedState, MixedStep
from .records import rewritten_with_records
from .rules import (
    CG_HEARTBEAT_MEMBER_LEFT,
    CG_TIMER_REBALANCE_TIMEOUT_EXPIRED,
    CG_TIMER_SESSION_EXPIRED,
)
from .state import ConsumerGroup
from .step import Reply

ClassicMemberTimeout = ClassicJoinTimeoutExpired | ClassicSyncTimeoutExpired
MixedInput = ClassicInput | ConsumerGroupInput | ClassicMemberTimeout

_CLASSIC_MEMBER_HANDLERS: dict[type, Callable[..., MixedState]] = {
    JoinGroupRequest: classic_join,
    SyncGroupRequest: classic_sync,
    HeartbeatRequest: classic_heartbeat,
    LeaveGroupRequest: classic_leave,
}


@dataclass(frozen=True)
class MixedOutcome:
    """One allowed result of a mixed step: the next state, every response, and why."""

    state: MixedState
    responses: tuple[Response | Reply, ...]
    rules: tuple[str, ...]
    choices: tuple[Choice, ...]


class MixedCoordinatorSpec:
    """Kafka 4.x's group coordinator for classic and consumer-protocol groups together."""

    def __init__(
        self,
        config: ConsumerGroupConfig | None = None,
        classic_config: CoordinatorConfig | None = None,
    ) -> None:
        self.config = config or ConsumerGroupConfig()
        self.classic = GroupCoordinatorSpec(classic_config)
        self.consumer = ConsumerGroupCoordinatorSpec(self.config)

    def initial_state(self) -> MixedState:
        """A coordinator holding no group (and leading every offsets partition)."""
        return MixedState(self.classic.initial_state(), self.consumer.initial_state())

    def armed_classic_member_timers(
        self, state: MixedState
    ) -> tuple[tuple[ClassicMemberTimeout, int], ...]:
        """The join and sync timeouts of classic members in consumer groups, with deadlines."""
        return classic_member_timers(state)

    def step(self, state: MixedState, event: MixedInput, now_ms: int) -> tuple[MixedOutcome, ...]:
        """Every outcome Kafka allows when `event` happens in `state` at `now_ms`."""
        if not isinstance(now_ms, int) or isinstance(now_ms, bool) or now_ms < 0:
            raise InputError(f"now_ms must be a non-negative integer, got {now_ms!r}")
        joint = self._joint_handler(state, event)
        if joint is not None:
            return self._run(state, now_ms, lambda step: joint(step, state))
        if isinstance(
            event,
            RequestArrived
            | SessionTimeoutExpired
            | RebalanceTimeoutExpired
            | RegexResolutionCompleted,
        ):
            return tuple(
                MixedOutcome(state.with_consumer(o.state), o.responses, o.rules, o.choices)
                for o in self.consumer.step(state.consumer, event, now_ms)
            )
        return tuple(
            MixedOutcome(MixedState(o.state, state.consumer), o.responses, o.rules, o.choices)
            for o in self.classic.step(state.classic, event, now_ms)  # type: ignore[arg-type]
        )

    def _run(
        self, before: MixedState, now_ms: int, run: Callable[[MixedStep], MixedState]
    ) -> tuple[MixedOutcome, ...]:
        def once(chooser: _Chooser) -> MixedOutcome:
            step = MixedStep(self.config, self.classic.config, now_ms, chooser)
            after = run(step)
            # What the crossing did to the consumer groups is written to their log, as the
            # consumer-protocol coordinator writes its own steps (records.py).
            logged = rewritten_with_records(self.config, before.consumer, after.consumer)
            after = after.with_consumer(logged)
            responses: tuple[Response | Reply, ...] = (*step.responses, *step.classic_responses)
            return MixedOutcome(after, responses, tuple(step.rules), tuple(step.choices))

        return every_combination(once)

    def _joint_handler(
        self, state: MixedState, event: object
    ) -> Callable[[MixedStep, MixedState], MixedState] | None:
        """The handler of an input that crosses the two kinds, or None for a one-kind input."""
        if isinstance(event, ClassicJoinTimeoutExpired | ClassicSyncTimeoutExpired):
            return lambda step, st: on_classic_timeout(step, st, event)
        if isinstance(event, Received):
            return self._classic_request_handler(state, event)
        if isinstance(event, RequestArrived) and isinstance(
            event.request, ConsumerGroupHeartbeatRequest
        ):
            return self._heartbeat_handler(state, event)
        if isinstance(event, SessionTimeoutExpired | RebalanceTimeoutExpired):
            return self._timer_handler(state, event)
        return None

    # Classic requests ------------------------------------------------------------------------

    def _classic_request_handler(
        self, state: MixedState, received: Received
    ) -> Callable[[MixedStep, MixedState], MixedState] | None:
        request: Any = received.request
        group_id = getattr(request, "group_id", None)
        if group_id is None or state.kind_of(group_id) is not GroupKind.CONSUMER:
            return None
        if isinstance(request, OffsetCommitRequest | OffsetFetchRequest):
            raise UnknownApiError(
                "offsets of a consumer group through the classic APIs are not modelled here "
                "(docs/protocol.md §12.15)"
            )
        if isinstance(request, JoinGroupRequest) and not self._session_timeout_valid(request):
            # GroupCoordinatorService.joinGroup refuses it before any group is read: the classic
            # coordinator's check answers INVALID_SESSION_TIMEOUT the same way.
            return None
        group = state.consumer.group(group_id)
        assert group is not None
        if not group.members_by_id and isinstance(request, JoinGroupRequest):
            return lambda step, st: self._replace_empty_consumer_group(step, st, received)
        # SyncGroup, Heartbeat and LeaveGroup to an Empty consumer group find no member:
        # UNKNOWN_MEMBER_ID, as Kafka answers for an empty group.
        handler = _CLASSIC_MEMBER_HANDLERS.get(type(request))
        if handler is None:
            return None
        return lambda step, st: handler(step, st, received.ref, request, group)

    def _session_timeout_valid(self, request: JoinGroupRequest) -> bool:
        config = self.classic.config
        return (
            config.group_min_session_timeout_ms
            <= request.session_timeout_ms
            <= config.group_max_session_timeout_ms
        )

    def _replace_empty_consumer_group(
        self, step: MixedStep, state: MixedState, received: Received
    ) -> MixedState:
        """classicGroupJoinToClassicGroup deletes an Empty consumer group and joins a new one."""
        step.fire(CG_CLASSIC_EMPTY_CONSUMER_GROUP_REPLACED)
        request: Any = received.request
        without = state.consumer.without_group(request.group_id)
        (outcome,) = _only(self.classic.step(state.classic, received, step.now_ms))
        step.rules.extend(outcome.rules)
        step.classic_responses.extend(outcome.responses)
        return MixedState(outcome.state, without)

    # ConsumerGroupHeartbeat ------------------------------------------------------------------

    def _heartbeat_handler(
        self, state: MixedState, arrived: RequestArrived
    ) -> Callable[[MixedStep, MixedState], MixedState] | None:
        request = arrived.request
        assert isinstance(request, ConsumerGroupHeartbeatRequest)
        kind = state.kind_of(request.group_id)
        if kind is GroupKind.CLASSIC:
            if invalid_request_reason(request) or (
                request.server_assignor is not None
                and request.server_assignor not in self.config.assignors
            ):
                return None  # refused before the group is read, as by the consumer side alone
            return lambda step, st: self._heartbeat_to_classic(step, st, arrived)
        if kind is GroupKind.CONSUMER and request.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
            group = state.consumer.group(request.group_id)
            assert group is not None
            member = group.member(request.member_id)
            valid = member is not None and (
                request.instance_id is None or member.instance_id == request.instance_id
            )
            if valid and _would_downgrade(group, request.member_id):
                return lambda step, st: self._leave_with_downgrade(step, st, arrived, group)
        return None

    def _heartbeat_to_classic(
        self, step: MixedStep, state: MixedState, arrived: RequestArrived
    ) -> MixedState:
        """getOrMaybeCreateConsumerGroup for a group id held by a classic group."""
        request = arrived.request
        assert isinstance(request, ConsumerGroupHeartbeatRequest)
        classic = state.classic.group(request.group_id)
        assert classic is not None
        if classic.offsets:
            # Kafka keeps a group's offsets apart from its type; the classic spec keeps them in
            # the group, and consumer groups hold none yet.
            raise UnknownApiError(
                "a ConsumerGroupHeartbeat for a classic group with committed offsets: offsets "
                "carried across a conversion are not modelled (docs/protocol.md §12.15)"
            )
        if request.member_epoch != JOIN_GROUP_MEMBER_EPOCH:
            step.fire(CG_CONVERT_NOT_A_CONSUMER_GROUP)
            step.respond(arrived.ref, ConsumerGroupHeartbeatResponse(ErrorCode.GROUP_ID_NOT_FOUND))
            return state
        if classic.state is EMPTY:
            step.fire(CG_CONVERT_EMPTY_CLASSIC_REPLACED)
            emptied = MixedState(state.classic.without_group(classic.group_id), state.consumer)
            consumer = consumer_group_heartbeat(step, emptied.consumer, arrived.ref, request)
            return emptied.with_consumer(consumer)
        try:
            converted = upgrade(step, classic)
        except UpgradeRefused:
            step.respond(arrived.ref, ConsumerGroupHeartbeatResponse(ErrorCode.GROUP_ID_NOT_FOUND))
            return state
        unparked = answer_parked(step, classic)
        upgraded = state.with_consumer_group(converted)
        consumer = consumer_group_heartbeat(step, upgraded.consumer, arrived.ref, request)
        answer = step.responses[-1].body
        assert isinstance(answer, ConsumerGroupHeartbeatResponse)
        if answer.error_code is not ErrorCode.NONE:
            step.fire(CG_CONVERT_UPGRADE_JOIN_REFUSED)
            return MixedState(state.classic.with_group(unparked), state.consumer)
        return upgraded.with_consumer(consumer)

    def _leave_with_downgrade(
        self, step: MixedStep, state: MixedState, arrived: RequestArrived, group: ConsumerGroup
    ) -> MixedState:
        """consumerGroupLeave of the last consumer-protocol member: fence it, maybe downgrade."""
        request = arrived.request
        assert isinstance(request, ConsumerGroupHeartbeatRequest)
        step.fire(CG_HEARTBEAT_MEMBER_LEFT)
        step.respond(
            arrived.ref,
            ConsumerGroupHeartbeatResponse(
                ErrorCode.NONE, member_id=request.member_id, member_epoch=request.member_epoch
            ),
        )
        return fence_members(step, state, group, (request.member_id,))

    # Consumer-group timers -------------------------------------------------------------------

    def _timer_handler(
        self, state: MixedState, event: SessionTimeoutExpired | RebalanceTimeoutExpired
    ) -> Callable[[MixedStep, MixedState], MixedState] | None:
        """A session or rebalance timeout that fences a member whose leaving may downgrade."""
        group = state.consumer.group(event.group_id)
        if group is None or group.member(event.member_id) is None:
            return None
        if isinstance(event, SessionTimeoutExpired):
            if event.member_id not in dict(group.session_deadlines):
                return None
            rule = CG_TIMER_SESSION_EXPIRED
            cleared = group.without_session_deadline(event.member_id)
        else:
            armed = dict(group.rebalance_deadlines).get(event.member_id)
            member = group.member(event.member_id)
            if armed is None or member is None or member.member_epoch != armed[0]:
                return None
            rule = CG_TIMER_REBALANCE_TIMEOUT_EXPIRED
            cleared = group.without_rebalance_deadline(event.member_id)
        if not _would_downgrade(group, event.member_id):
            return None

        def fence(step: MixedStep, st: MixedState) -> MixedState:
            step.fire(rule)
            return fence_members(step, st, cleared, (event.member_id,))

        return fence


def _would_downgrade(group: ConsumerGroup, member_id: str) -> bool:
    """Whether fencing `member_id` leaves only classic members, so that the downgrade checks
    (policy, size) decide; the consumer side alone handles every other fencing."""
    remaining = [m for m in group.iter_members() if m.member_id != member_id]
    return bool(remaining) and all(m.uses_classic_protocol for m in remaining)


def _only(outcomes: tuple[Any, ...]) -> tuple[Any]:
    """The single outcome of a step the classic coordinator takes without a choice."""
    if len(outcomes) != 1:
        raise UnknownApiError(
            "a classic join replacing an empty consumer group with implementation choices "
            "(write failures) is not modelled"
        )
    return (outcomes[0],)
