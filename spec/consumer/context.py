"""What a consumer handler may use during one step: configuration, assignors, effects, sending."""

from __future__ import annotations

from dataclasses import dataclass, replace

from groupspec.vocabulary.requests import Request, TopicPartition

from ..assignment import RebalanceProtocol
from ..assignors.base import Assignor
from .config import ConsumerConfig
from .outcome import Effects, Send
from .rules import ConsumerRule
from .state import ConsumerState, InFlight, RequestKind


@dataclass(frozen=True)
class ConsumerSetup:
    """The fixed part of a consumer: its config, its assignors in order, the chosen protocol."""

    config: ConsumerConfig
    assignors: tuple[Assignor, ...]
    protocol: RebalanceProtocol

    def assignor(self, name: str | None) -> Assignor | None:
        """The configured assignor offered under `name`, or None (Kafka's lookupAssignor)."""
        for assignor in self.assignors:
            if assignor.name == name:
                return assignor
        return None


class StepContext:
    """One run of a handler: the setup plus the effects the step collects."""

    def __init__(self, setup: ConsumerSetup, effects: Effects) -> None:
        self.setup = setup
        self.config = setup.config
        self.effects = effects

    def fire(self, rule: ConsumerRule) -> None:
        """Record that a consumer rule applied."""
        self.effects.fire(rule)

    def send(
        self,
        state: ConsumerState,
        kind: RequestKind,
        request: Request,
        offsets: tuple[tuple[TopicPartition, int], ...] = (),
    ) -> ConsumerState:
        """Send `request` under the next correlation id and remember it as in flight."""
        correlation_id = state.next_correlation_id
        self.effects.sends.append(Send(correlation_id, request))
        entry = InFlight(correlation_id, kind, state.generation, offsets)
        return replace(
            state,
            in_flight=(*state.in_flight, entry),
            next_correlation_id=correlation_id + 1,
        )
