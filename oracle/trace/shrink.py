"""Shrinking a divergence's excerpt: leave out request/response pairs while the rest still
diverges at the same response, against the same allowed responses.

The excerpt is replayed many times, each time with one pair left out, so what it costs is
the events replayed. Two things keep that low without changing which excerpt comes out:

- **Prefix states are reused.** A replay starts from an oracle forked (`Oracle.fork`) before
  the pair left out, not from the trace's start: the run that found the divergence leaves
  such checkpoints (`CheckpointRecorder`), and every accepted excerpt's replay leaves its own.
- **A replay stops once it has caught up.** When, past the pair left out, the replay's oracle
  is in the same state as the excerpt's own run at the same line (`Oracle.future_key`), the
  rest of the replay would go as that run did, so its outcome is known: a heartbeat left out
  is caught up at the member's next heartbeat.

First the excerpt's last few pairs alone are tried (the target's pair alone, then with the
1, 3, 7, ... pairs before it, up to half the excerpt): a divergence that needs no history (an
undecodable response, an error to a member never seen) is found so at the cost of a few
events. Then pairs are tried one at a time from the end backwards (pairs near the divergence
are the cheapest to try), in passes, until a pass leaves none out: the excerpt is then
*minimal*, no single pair can be left out. A `ShrinkBudget` bounds the work, counted in
specification steps (`Tracker.steps`, at least one per event replayed); when it runs out, the
excerpt found so far is kept and said to be *not fully shrunk*.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from groupspec.wire.trace_format import CLOSE, REQUEST, TraceEvent

from .oracle import Divergence, ObservationError, Oracle
from .tracker import TooAmbiguous

MINIMAL = "minimal"
NOT_FULLY_SHRUNK = "not fully shrunk"
NOT_SHRUNK = "not shrunk"
# The run that judges a trace keeps at most this many checkpoints: when full, every other one
# is dropped and they are taken half as often (memory stays bounded on any trace).
MAX_CHECKPOINTS = 256
FIRST_SPACING = 4

Event = tuple[int, TraceEvent]  # (line, event)


@dataclass(frozen=True)
class ShrinkOutcome:
    """How far an excerpt was shrunk: its status (`MINIMAL`, `NOT_FULLY_SHRUNK`,
    `NOT_SHRUNK`), why when it is not minimal, the events replayed and excerpts tried."""

    status: str = NOT_SHRUNK
    why: str = "shrinking is off (--no-shrink)"
    replayed_events: int = 0
    steps: int = 0
    tried: int = 0

    @property
    def minimal(self) -> bool:
        """Whether no single request/response pair can be left out of the excerpt."""
        return self.status == MINIMAL

    def describe(self) -> str:
        """For people: the status, and why when not minimal."""
        if self.minimal:
            return f"{MINIMAL}: no request/response pair can be left out"
        return f"{self.status}: {self.why}"

    def to_json(self) -> dict[str, Any]:
        """The outcome as a JSON object."""
        return {
            "status": self.status,
            "why": "" if self.minimal else self.why,
            "replayed_events": self.replayed_events,
            "steps": self.steps,
            "excerpts_tried": self.tried,
        }


class BudgetSpent(Exception):
    """The shrinking budget ran out."""


class ShrinkBudget:
    """The work shrinking may still do, in specification steps (None: no limit), and what it
    did: steps and events replayed."""

    def __init__(self, steps: int | None) -> None:
        self.left = steps
        self.spent = 0
        self.events = 0

    def check(self) -> None:
        """`BudgetSpent` if nothing is left."""
        if self.left is not None and self.left <= 0:
            raise BudgetSpent

    def spend(self, steps: int) -> None:
        """Count an event replayed, which took `steps` (charged at least one)."""
        charged = max(steps, 1)
        if self.left is not None:
            self.left -= charged
        self.spent += charged
        self.events += 1

    def share(self, ways: int) -> ShrinkBudget:
        """A budget of an even share of what is left, among `ways` users; what the share does
        not spend stays here for the next."""
        if self.left is None:
            return ShrinkBudget(None)
        return ShrinkBudget(self.left // max(ways, 1))

    def take_back(self, share: ShrinkBudget) -> None:
        """Charge what `share` spent to this budget."""
        if self.left is not None:
            self.left = max(self.left - share.spent, 0)
        self.spent += share.spent
        self.events += share.events


class Checkpoints:
    """Oracles forked just before some lines of one run over an excerpt, in line order, with
    each one's `future_key` worked out when first compared."""

    def __init__(self, forks: dict[int, Oracle] | None = None) -> None:
        self._forks: dict[int, Oracle] = dict(sorted((forks or {}).items()))
        self._lines = list(self._forks)
        self._keys: dict[int, tuple[Any, ...]] = {}

    def __contains__(self, line: int) -> bool:
        return line in self._forks

    def add(self, line: int, oracle: Oracle) -> None:
        """The oracle before `line` (after every checkpoint held)."""
        if self._lines and line <= self._lines[-1]:
            raise ValueError(f"checkpoint at line {line} after one at {self._lines[-1]}")
        self._forks[line] = oracle
        self._lines.append(line)

    def key(self, line: int) -> tuple[Any, ...]:
        """The future key of the oracle before `line`."""
        found = self._keys.get(line)
        if found is None:
            found = self._keys[line] = self._forks[line].future_key()
        return found

    def before(self, line: int) -> tuple[int, Oracle] | None:
        """The latest checkpoint at or before `line`, if any."""
        at = bisect.bisect_right(self._lines, line)
        if not at:
            return None
        latest = self._lines[at - 1]
        return latest, self._forks[latest]

    def up_to(self, line: int) -> Checkpoints:
        """The checkpoints at or before `line`, their keys kept."""
        kept = Checkpoints()
        kept._lines = self._lines[: bisect.bisect_right(self._lines, line)]
        kept._forks = {n: self._forks[n] for n in kept._lines}
        kept._keys = {n: self._keys[n] for n in kept._lines if n in self._keys}
        return kept

    def add_from(self, other: Checkpoints, line: int) -> None:
        """Take `other`'s checkpoints at or after `line` (after every one held), their keys
        kept."""
        for n in other._lines[bisect.bisect_left(other._lines, line) :]:
            self.add(n, other._forks[n])
            if n in other._keys:
                self._keys[n] = other._keys[n]


class CheckpointRecorder:
    """Forks of the oracle judging a whole trace, taken every few events: at most
    `MAX_CHECKPOINTS`, evenly spread (when full, every other one goes and they are taken half
    as often)."""

    def __init__(self) -> None:
        self.spacing = FIRST_SPACING
        self.forks: dict[int, Oracle] = {}
        self._seen = 0

    def before(self, line: int, oracle: Oracle) -> None:
        """`oracle` is about to observe `line`: fork it if a checkpoint is due."""
        if self._seen % self.spacing == 0:
            if len(self.forks) >= MAX_CHECKPOINTS:
                self.forks = {n: o for i, (n, o) in enumerate(self.forks.items()) if i % 2 == 0}
                self.spacing *= 2
            if self._seen % self.spacing == 0:
                self.forks[line] = oracle.fork()
        self._seen += 1

    def checkpoints(self) -> Checkpoints:
        """What was recorded."""
        return Checkpoints(self.forks)


@dataclass(frozen=True)
class Known:
    """A run over an excerpt already made: its checkpoints and whether it diverged as the
    target did (the run that judged the trace, for an excerpt that is its whole prefix)."""

    checkpoints: Checkpoints
    reproduces: bool


def shrink_excerpt(
    events: Sequence[Event],
    target: Divergence,
    make_oracle: Callable[[], Oracle],
    budget: ShrinkBudget,
    known: Known | None = None,
    whole: tuple[Sequence[Event], Known] | None = None,
) -> tuple[list[Event], ShrinkOutcome]:
    """`events` (ending with the target's response) with request/response pairs left out
    while the rest still diverges there as `target` did, within `budget`; and how far it got.
    `known` is a run over exactly `events` already made, if any; `whole` the trace up to the
    target with the run that judged it, shrunk instead if `events` alone do not diverge so
    (another group's events had a part in it)."""
    run = _Shrinker(target, make_oracle, budget, list(events))
    try:
        if known is None:
            known = run.replay_all()
            if not known.reproduces and whole is not None:
                run.take(list(whole[0]))
                known = whole[1]
        run.reference, run.reproduces = known.checkpoints, known.reproduces
        if not run.reproduces:
            why = "replayed alone, the excerpt does not diverge so"
            return run.current, ShrinkOutcome(NOT_SHRUNK, why, budget.events, budget.spent)
        run.suffixes()
        run.sweep()
    except BudgetSpent:
        spent = (
            f"its share of the shrinking budget ran out after {budget.events} events replayed "
            f"({budget.spent} specification steps)"
            if budget.events
            else "the kinds before it spent the shrinking budget"
        )
        why = f"{spent}; validate --shrink shrinks it until minimal"
        outcome = ShrinkOutcome(NOT_FULLY_SHRUNK, why, budget.events, budget.spent, run.tried)
        return run.current, outcome
    return run.current, ShrinkOutcome(MINIMAL, "", budget.events, budget.spent, run.tried)


class _Shrinker:
    """The excerpt as shrunk so far (`current`), and its run's checkpoints (`reference`)."""

    def __init__(
        self,
        target: Divergence,
        make_oracle: Callable[[], Oracle],
        budget: ShrinkBudget,
        current: list[Event],
    ) -> None:
        self.target = target
        self.make_oracle = make_oracle
        self.budget = budget
        self.reference = Checkpoints()
        self.reproduces = True
        self.tried = 0
        self.take(current)

    def take(self, current: list[Event]) -> None:
        """`current` is the excerpt from now on."""
        self.current = current
        self.lines = [n for n, _ in current]
        # Where each request/response pair's events are in the excerpt.
        self.places: dict[tuple[str, int], list[int]] = {}
        for index, (_, event) in enumerate(current):
            if event.direction != CLOSE:
                self.places.setdefault((event.connection, event.correlation_id), []).append(index)

    def replay_all(self) -> Known:
        """Replay the excerpt from the start, checkpoints at every event."""
        recorded = Checkpoints()
        reproduces, _ = self._replay(iter(self.current), self.make_oracle(), recorded, None)
        return Known(recorded, reproduces)

    def suffixes(self) -> None:
        """Try the target's pair alone, then with the 1, 3, 7, ... pairs before it, while that
        is less than half the excerpt; the first that diverges as the target did is kept."""
        pairs = self._pairs()
        kept = 0
        while kept < len(pairs) // 2:
            if self._try_without(pairs[: len(pairs) - kept]):
                return
            kept = 2 * kept + 1

    def sweep(self) -> None:
        """Passes from the end backwards, each trying every pair once, until one leaves none
        out."""
        while True:
            left_out = False
            for pair in reversed(self._pairs()):
                if self._try_without([pair]):
                    left_out = True
            if not left_out:
                return

    def _pairs(self) -> list[tuple[str, int]]:
        """The request/response pairs the excerpt may lose: all but the target's."""
        target = (self.target.connection, self.target.correlation_id)
        return [
            (e.connection, e.correlation_id)
            for _, e in self.current
            if e.direction == REQUEST and (e.connection, e.correlation_id) != target
        ]

    def _try_without(self, pairs: Sequence[tuple[str, int]]) -> bool:
        """Whether the excerpt without `pairs` still diverges as the target did; if so, it is
        the excerpt from now on."""
        left_out = {index for pair in pairs for index in self.places.get(pair, ())}
        if not left_out:
            return False
        first, last = self.lines[min(left_out)], self.lines[max(left_out)]
        self.tried += 1
        start = self.reference.before(first)
        if start is None:
            oracle, index, recorded = self.make_oracle(), 0, Checkpoints()
        else:
            line, fork = start
            oracle = fork.fork()
            index = bisect.bisect_left(self.lines, line)
            recorded = self.reference.up_to(first)
        events = (self.current[i] for i in range(index, len(self.current)) if i not in left_out)
        reproduces, caught_up_at = self._replay(events, oracle, recorded, last)
        if caught_up_at is not None:
            recorded.add_from(self.reference, caught_up_at)
        if reproduces:
            self.take([event for i, event in enumerate(self.current) if i not in left_out])
            self.reference = recorded
        return reproduces

    def _replay(
        self,
        events: Iterator[Event],
        oracle: Oracle,
        recorded: Checkpoints,
        caught_up_after: int | None,
    ) -> tuple[bool, int | None]:
        """Replay `events` on `oracle`, forks recorded before every event: whether it diverges
        as the target did, and the line where it caught up with the reference run past
        `caught_up_after` (the last line left out), if it did: from there it would go as the
        reference run went, so that run's outcome is the replay's."""
        found = None
        try:
            for line, event in events:
                if (
                    caught_up_after is not None
                    and line > caught_up_after
                    and line in self.reference
                    and oracle.future_key() == self.reference.key(line)
                ):
                    return self.reproduces, line
                if line not in recorded:
                    recorded.add(line, oracle.fork())
                self.budget.check()
                steps = oracle.tracker.steps
                found = oracle.observe(event, line)
                self.budget.spend(oracle.tracker.steps - steps)
        except (ObservationError, TooAmbiguous):
            return False, None
        return found is not None and _same(found, self.target), None


def _same(found: Divergence, target: Divergence) -> bool:
    return (found.line, found.reason, found.allowed) == (target.line, target.reason, target.allowed)
