"""One step of the specification: a relation from (state, input) to every allowed outcome.

Handlers are written as straight-line code, like Kafka's. Where Kafka leaves a choice to the
implementation, a handler calls `Step.choose`; `all_outcomes` re-runs the handler once for
every combination of choices (replay-based enumeration), so each run is deterministic and the
relation is the set of all runs. Each run starts from the same immutable state, so runs cannot
interfere with one another.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import RequestRef
from groupspec.vocabulary.responses import Response, ResponseBody

from .config import CoordinatorConfig
from .log import LogKey, LogValue
from .rules import RULES, Rule
from .state import CoordinatorState

T = TypeVar("T")

_KNOWN_RULES: frozenset[Rule] = frozenset(RULES)


@dataclass(frozen=True)
class Choice:
    """An implementation-defined decision taken during a step, and the value chosen."""

    what: str
    value: str


@dataclass(frozen=True)
class Outcome:
    """One allowed result of a step: the next state, the responses sent, and why."""

    state: CoordinatorState
    responses: tuple[Response, ...]
    rules: tuple[str, ...]
    choices: tuple[Choice, ...]


class _Chooser:
    """Replays a fixed prefix of choice indices, then always takes the first option."""

    def __init__(self, forced: tuple[int, ...]) -> None:
        self.forced = forced
        self.taken: list[int] = []
        self.widths: list[int] = []

    def pick(self, width: int) -> int:
        depth = len(self.taken)
        index = self.forced[depth] if depth < len(self.forced) else 0
        self.taken.append(index)
        self.widths.append(width)
        return index


class Choosing:
    """The part of a step that takes the choices Kafka leaves to the implementation; each run of
    a handler takes one combination of them (`every_combination` runs them all)."""

    def __init__(self, chooser: _Chooser) -> None:
        self._chooser = chooser
        self.choices: list[Choice] = []

    def choose(self, what: str, options: Sequence[T]) -> T:
        """An implementation-defined choice among `options`; every option is explored."""
        if not options:
            raise ValueError(f"no options to choose {what} from")
        if len(options) == 1:
            return options[0]
        chosen = options[self._chooser.pick(len(options))]
        self.choices.append(Choice(what, str(chosen)))
        return chosen


R = TypeVar("R")


def every_combination(run: Callable[[_Chooser], R]) -> tuple[R, ...]:
    """The distinct results of `run` over every combination of the choices it takes, in a stable
    order (the first options first)."""
    results: list[R] = []
    seen: set[R] = set()
    frontier: list[tuple[int, ...]] = [()]
    while frontier:
        forced = frontier.pop(0)
        chooser = _Chooser(forced)
        result = run(chooser)
        if not forced and not chooser.widths:
            return (result,)  # the handler took no choice: this run is the only outcome
        if result not in seen:
            seen.add(result)
            results.append(result)
        for depth in range(len(forced), len(chooser.taken)):
            prefix = tuple(chooser.taken[:depth])
            frontier.extend(
                (*prefix, alternative) for alternative in range(1, chooser.widths[depth])
            )
    return tuple(results)


class Step(Choosing):
    """What one run of a handler may use and produce: config, clock, choices, effects."""

    def __init__(self, config: CoordinatorConfig, now_ms: int, chooser: _Chooser) -> None:
        super().__init__(chooser)
        self.config = config
        self.now_ms = now_ms
        self.responses: list[Response] = []
        self.rules: list[str] = []
        self.appended: list[tuple[LogKey, LogValue | None]] = []

    def respond(self, ref: RequestRef, body: ResponseBody) -> None:
        """Send `body` as the response to the request `ref`."""
        self.responses.append(Response(ref, body))

    def fire(self, rule: Rule) -> None:
        """Record that the spec rule `rule` (a constant of spec/rules.py) applied, by its id."""
        if rule not in _KNOWN_RULES:
            raise KeyError(f"unknown spec rule {rule!r}: add it to RULES in spec/rules.py")
        self.rules.append(rule.rule_id)

    def write(self, records: Sequence[tuple[LogKey, LogValue | None]]) -> ErrorCode | None:
        """Append records to the offsets log; returns the append error, or None on success.

        With `config.write_failures` empty every append succeeds; otherwise success and each
        configured failure are all explored.
        """
        failure = self.choose("append", (None, *self.config.write_failures))
        if failure is None:
            self.appended.extend(records)
        return failure


def all_outcomes(
    config: CoordinatorConfig,
    now_ms: int,
    run: Callable[[Step], CoordinatorState],
) -> tuple[Outcome, ...]:
    """Every distinct outcome of `run` over all combinations of its choices, in a stable order."""

    def once(chooser: _Chooser) -> Outcome:
        step = Step(config, now_ms, chooser)
        state = run(step)
        log = state.log
        for key, value in step.appended:
            log = log.append(key, value)
        return Outcome(
            state=replace(state, log=log),
            responses=tuple(step.responses),
            rules=tuple(step.rules),
            choices=tuple(step.choices),
        )

    return every_combination(once)
