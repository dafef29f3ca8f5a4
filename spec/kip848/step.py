"""One step of the consumer-protocol coordinator: a relation from (state, input) to every allowed
outcome, enumerated the way the classic spec's `spec/step.py` does (replaying the handler once
per combination of choices; its `_Chooser` is reused).

The step is its own class because it fires the rules of this side (`rules.KIP848_RULES`) and
returns a `ConsumerGroupsState`; the classic `Step` knows only the classic rules and state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.vocabulary.requests import RequestRef

from ..rules import Rule
from ..step import Choice, _Chooser
from .config import ConsumerGroupConfig
from .rules import KIP848_RULES
from .state import ConsumerGroupsState

T = TypeVar("T")
ReplyBody = ConsumerGroupHeartbeatResponse | ConsumerGroupDescribeResponse

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


class Step:
    """What one run of a handler may use and produce: config, clock, choices, rules, replies."""

    def __init__(self, config: ConsumerGroupConfig, now_ms: int, chooser: _Chooser) -> None:
        self.config = config
        self.now_ms = now_ms
        self._chooser = chooser
        self.responses: list[Reply] = []
        self.rules: list[str] = []
        self.choices: list[Choice] = []

    def respond(self, ref: RequestRef, body: ReplyBody) -> None:
        """Send `body` as the response to the request `ref`."""
        self.responses.append(Reply(ref, body))

    def fire(self, rule: Rule) -> None:
        """Record that `rule` (a constant of spec/kip848/rules.py) applied, by its id."""
        if rule not in _KNOWN_RULES:
            raise KeyError(f"unknown rule {rule!r}: add it to KIP848_RULES in spec/kip848/rules.py")
        self.rules.append(rule.rule_id)

    def choose(self, what: str, options: Sequence[T]) -> T:
        """A choice Kafka leaves to the implementation among `options`; every one is explored."""
        if not options:
            raise ValueError(f"no options to choose {what} from")
        if len(options) == 1:
            return options[0]
        chosen = options[self._chooser.pick(len(options))]
        self.choices.append(Choice(what, str(chosen)))
        return chosen


def all_outcomes(
    config: ConsumerGroupConfig,
    now_ms: int,
    run: Callable[[Step], ConsumerGroupsState],
) -> tuple[Outcome, ...]:
    """Every distinct outcome of `run` over all combinations of its choices, in a stable order."""
    outcomes: list[Outcome] = []
    seen: set[Outcome] = set()
    frontier: list[tuple[int, ...]] = [()]
    while frontier:
        forced = frontier.pop(0)
        chooser = _Chooser(forced)
        step = Step(config, now_ms, chooser)
        state = run(step)
        outcome = Outcome(state, tuple(step.responses), tuple(step.rules), tuple(step.choices))
        if outcome not in seen:
            seen.add(outcome)
            outcomes.append(outcome)
        for depth in range(len(forced), len(chooser.taken)):
            prefix = tuple(chooser.taken[:depth])
            frontier.extend(
                (*prefix, alternative) for alternative in range(1, chooser.widths[depth])
            )
    return tuple(outcomes)
