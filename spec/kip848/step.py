"""One step of the consumer-protocol coordinator: a relation from (state, input) to every allowed
outcome, enumerated by the classic spec's `spec/step.py` (`Choosing` takes the choices,
`every_combination` replays the handler once per combination of them).

The step is its own class because it fires the rules of this side (`rules.KIP848_RULES`) and
returns a `ConsumerGroupsState`; the classic `Step` knows only the classic rules and state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.vocabulary.requests import RequestRef
from groupspec.vocabulary.responses import (
    DeleteGroupsResponse,
    ListGroupsResponse,
    OffsetCommitResponse,
    OffsetFetchResponse,
)

from ..rules import Rule
from ..step import Choice, Choosing, _Chooser, every_combination
from .config import ConsumerGroupConfig
from .rules import KIP848_RULES
from .state import ConsumerGroupsState

T = TypeVar("T")
ReplyBody = (
    ConsumerGroupHeartbeatResponse
    | ConsumerGroupDescribeResponse
    | OffsetCommitResponse
    | OffsetFetchResponse
    | ListGroupsResponse
    | DeleteGroupsResponse
)

_KNOWN_RULES: frozenset[Rule] = frozenset(KIP848_RULES)


@dataclass(frozen=True)
class Reply:
    """A response body addressed to the request it answers."""

    ref: RequestRef
    body: ReplyBody


@dataclass(frozen=True)
class Outcome:
    """One allowed result of a step: the next state, the responses sent, and why."""

    state: ConsumerGroupsState
    responses: tuple[Reply, ...]
    rules: tuple[str, ...]
    choices: tuple[Choice, ...]


class Step(Choosing):
    """What one run of a handler may use and produce: config, clock, choices, rules, replies."""

    def __init__(self, config: ConsumerGroupConfig, now_ms: int, chooser: _Chooser) -> None:
        super().__init__(chooser)
        self.config = config
        self.now_ms = now_ms
        self.responses: list[Reply] = []
        self.rules: list[str] = []

    def respond(self, ref: RequestRef, body: ReplyBody) -> None:
        """Send `body` as the response to the request `ref`."""
        self.responses.append(Reply(ref, body))

    def fire(self, rule: Rule) -> None:
        """Record that `rule` (a constant of spec/kip848/rules.py) applied, by its id."""
        if rule not in _KNOWN_RULES:
            raise KeyError(f"unknown rule {rule!r}: add it to KIP848_RULES in spec/kip848/rules.py")
        self.rules.append(rule.rule_id)


def all_outcomes(
    config: ConsumerGroupConfig,
    now_ms: int,
    run: Callable[[Step], ConsumerGroupsState],
) -> tuple[Outcome, ...]:
    """Every distinct outcome of `run` over all combinations of its choices, in a stable order."""

    def once(chooser: _Chooser) -> Outcome:
        step = Step(config, now_ms, chooser)
        state = run(step)
        return Outcome(state, tuple(step.responses), tuple(step.rules), tuple(step.choices))

    return every_combination(once)
