"""The consumer-protocol coordinator as a relation: from a state and an input to every allowed
outcome (docs/protocol.md §12). Start here.

```python
spec = ConsumerGroupCoordinatorSpec(ConsumerGroupConfig())
outcomes = spec.step(spec.initial_state(), RequestArrived(ref, heartbeat), now_ms=0)
```

Each `Outcome` has the next state, the responses, the rules fired (spec/kip848/rules.py) and the
choices taken where Kafka leaves one open (the preferred assignor on a tie, the target
assignment).
"""

from __future__ import annotations

from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
)
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    ListGroupsRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
)

from ..errors import UnknownApiError
from .config import ConsumerGroupConfig
from .describe import consumer_group_describe, protocol_disabled
from .events import (
    ConsumerGroupInput,
    CoordinatorLoaded,
    CoordinatorLoadStarted,
    CoordinatorUnloaded,
    RebalanceTimeoutExpired,
    RegexResolutionCompleted,
    RequestArrived,
    SessionTimeoutExpired,
)
from .failover import (
    on_load_started,
    on_loaded,
    on_unloaded,
    refuse_while_not_active,
    with_records,
)
from .groups import delete_groups, list_groups
from .heartbeat import consumer_group_heartbeat
from .offsets import offset_commit, offset_fetch
from .regex import on_regex_resolved
from .state import ConsumerGroupsState, CoordinatorPhase
from .step import Outcome, Step, all_outcomes
from .timers import on_rebalance_timeout, on_session_timeout


class ConsumerGroupCoordinatorSpec:
    """The KIP-848 group coordinator of Kafka 4.x, for consumer-protocol groups."""

    def __init__(self, config: ConsumerGroupConfig | None = None) -> None:
        self.config = config or ConsumerGroupConfig()

    def initial_state(self) -> ConsumerGroupsState:
        """A coordinator holding no group."""
        return ConsumerGroupsState()

    def step(
        self, state: ConsumerGroupsState, event: ConsumerGroupInput, now_ms: int
    ) -> tuple[Outcome, ...]:
        """Every allowed outcome of `event` arriving in `state` at `now_ms`."""

        def run(step: Step) -> ConsumerGroupsState:
            if isinstance(event, CoordinatorUnloaded):
                return on_unloaded(step, state, event)
            if isinstance(event, CoordinatorLoadStarted):
                return on_load_started(step, state, event)
            if isinstance(event, CoordinatorLoaded):
                return on_loaded(step, state, event)
            if state.phase is not CoordinatorPhase.ACTIVE and isinstance(event, RequestArrived):
                return refuse_while_not_active(step, state, event)
            # Every change a handler makes reaches the log as records (spec/kip848/records.py).
            return with_records(step, state, handle(step))

        def handle(step: Step) -> ConsumerGroupsState:
            if isinstance(event, RequestArrived):
                request = event.request
                if not self.config.consumer_protocol_enabled:
                    disabled = protocol_disabled(step, state, event.ref, request)
                    if disabled is not None:
                        return disabled
                if isinstance(request, ConsumerGroupHeartbeatRequest):
                    return consumer_group_heartbeat(step, state, event.ref, request)
                if isinstance(request, ConsumerGroupDescribeRequest):
                    return consumer_group_describe(step, state, event.ref, request)
                if isinstance(request, OffsetCommitRequest):
                    return offset_commit(step, state, event.ref, request)
                if isinstance(request, OffsetFetchRequest):
                    return offset_fetch(step, state, event.ref, request)
                if isinstance(request, ListGroupsRequest):
                    return list_groups(step, state, event.ref, request)
                if isinstance(request, DeleteGroupsRequest):
                    return delete_groups(step, state, event.ref, request)
            if isinstance(event, SessionTimeoutExpired):
                return on_session_timeout(step, state, event)
            if isinstance(event, RebalanceTimeoutExpired):
                return on_rebalance_timeout(step, state, event)
            if isinstance(event, RegexResolutionCompleted):
                return on_regex_resolved(step, state, event)
            raise UnknownApiError(f"not an input of the consumer-protocol coordinator: {event!r}")

        return all_outcomes(self.config, now_ms, run)
