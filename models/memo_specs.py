"""The specifications' pure queries, remembered per state for the closed worlds.

`spec/` stays a plain rendering of the protocol; speed belongs to the models. These subclasses
answer exactly as the specifications do and remember the answers of the queries a world asks
for every state it explores (which events a consumer may take, which coordinator timers are
armed) by the canonical text of the state. The world reuses the same consumer and coordinator
states thousands of times, and the events come back as the same objects, whose own texts (the
keys of the world's step memo) are then computed once.
"""

from __future__ import annotations

from collections.abc import Mapping

from groupspec.spec import CoordinatorConfig, GroupCoordinatorSpec
from groupspec.spec.assignors.base import Assignor
from groupspec.spec.consumer import ConsumerConfig, ConsumerEvent, ConsumerSpec, ConsumerState
from groupspec.spec.events import TimerEvent
from groupspec.spec.state import CoordinatorState

from .memo import Memo
from .world_state import canonical_repr


class MemoConsumerSpec(ConsumerSpec):
    """A `ConsumerSpec` whose `enabled_events` are remembered per consumer state."""

    def __init__(
        self,
        config: ConsumerConfig,
        assignors: Mapping[str, Assignor] | None = None,
        memoize: bool = True,
    ) -> None:
        super().__init__(config, assignors)
        self._enabled: Memo[str, tuple[ConsumerEvent, ...]] = Memo(memoize)

    def enabled_events(self, state: ConsumerState) -> tuple[ConsumerEvent, ...]:
        """As `ConsumerSpec.enabled_events`, remembered by the state's canonical text."""
        return self._enabled.get(
            canonical_repr(state), lambda: ConsumerSpec.enabled_events(self, state)
        )


class MemoCoordinatorSpec(GroupCoordinatorSpec):
    """A `GroupCoordinatorSpec` whose `armed_timers` are remembered per coordinator state."""

    def __init__(self, config: CoordinatorConfig | None = None, memoize: bool = True) -> None:
        super().__init__(config)
        self._armed: Memo[str, tuple[tuple[int, TimerEvent], ...]] = Memo(memoize)

    def armed_timers(self, state: CoordinatorState) -> tuple[tuple[int, TimerEvent], ...]:
        """As `GroupCoordinatorSpec.armed_timers`, remembered by the state's canonical text."""
        return self._armed.get(
            canonical_repr(state), lambda: GroupCoordinatorSpec.armed_timers(self, state)
        )
