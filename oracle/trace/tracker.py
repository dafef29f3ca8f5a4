"""The oracle's core: the set of specification states consistent with what was observed.

Watching a coordinator from outside leaves three things open, and the tracker keeps every
answer to them that the observations allow (a *hypothesis* each):

- **When a request took effect.** Kafka handles a connection's requests in order, but requests
  on different connections race; a request takes effect at some moment between being seen and
  its response being seen, and at the latest `reorder_window_ms` after it was seen.
- **When a timer fired.** An armed timer (session, join, sync, retention) may fire any time
  after its deadline and must have fired `timer_slack_ms` after it.
- **What the implementation chose** where the specification allows several outcomes (which
  member leads, protocol-vote ties) and how it spells member ids (the `Binding`).

Hypotheses advance lazily: a move (a request taking effect, a timer firing) is made only when an
observation needs it, or when time forces it. Moves commute with observations, so a lazy
hypothesis stands for every eager one that made the same moves in the same order. An observed
response keeps the hypotheses that produce an equal response and drops the rest; when none
remains, the coordinator diverged from the specification.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from groupspec.checker.rewrite import RewriteMemo, rewrite_strings
from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.coordinator import GroupCoordinatorSpec
from groupspec.spec.events import EventNotEnabledError, PartitionEvent, TimerEvent
from groupspec.spec.member_ids import rename_request_member_ids
from groupspec.spec.state import CoordinatorState
from groupspec.vocabulary import requests as rq
from groupspec.vocabulary.responses import ResponseBody

from .binding import Binding

Ref = tuple[str, int]

# Parts remembered per binding before its memo starts afresh, and bindings remembered at once.
SPELLING_MEMO_LIMIT = 100_000
SPELLING_MEMOS = 8
# Requests remembered in the specification's spelling (heartbeats repeat; commits rarely do).
RENAMED_LIMIT = 10_000
# Distinct bindings remembered for interning (`Tracker._interned`).
BINDINGS_LIMIT = 10_000

# `OracleSettings.foreign_groups`: leave groups the trace never named out of ListGroups, or not.
IGNORE_FOREIGN = "ignore"
JUDGE_FOREIGN = "judge"


@dataclass(frozen=True)
class OracleSettings:
    """How much the observed coordinator's timing may differ from the recorder's clock."""

    timer_slack_ms: int = 1_000
    reorder_window_ms: int = 1_000
    max_hypotheses: int = 20_000
    # A response seen more than this long after the specification produced it is late, and a
    # request whose response was due this long before the trace ended was never answered.
    late_response_ms: int = 30_000
    # Whether ListGroups may list groups no request of the trace named so far (a shared broker's
    # other groups): "ignore" leaves them out of the comparison (counted), "judge" compares them.
    foreign_groups: str = IGNORE_FOREIGN
    # Stop judging a trace after this many divergences (0: judge it to the end).
    max_divergences: int = 0
    # The trace may start mid-stream, with groups already present: hold each group back until
    # it is learned (oracle/trace/mid_stream.py).
    mid_stream: bool = False
    # Judge by the optimized path (see docs/oracle.md, "Speed"); False takes the plain one, the
    # reference the optimizations are tested and benchmarked against: the verdicts are equal.
    optimized: bool = True


@dataclass(frozen=True, slots=True)
class Pending:
    """An observed request that has not taken effect yet (in some hypothesis)."""

    ref: Ref
    api_key: int
    version: int
    requests: tuple[rq.Request, ...]
    ts: int
    line: int
    # What a tolerated deviation makes of the request instead, and the tolerance's name.
    alternative: tuple[tuple[rq.Request, ...], str] | None = None


@dataclass(frozen=True, slots=True)
class Hypothesis:
    """One way the coordinator may stand: its state, what it has not yet done, and its ids.

    `queues` are the requests not yet taken, per connection in arrival order; `outbox` the
    responses produced but not yet observed (a batched request has one body per key);
    `origins` when and by which rules each response in the outbox was produced, and `deviated`
    the requests taken as a tolerated deviation makes them, and `fired` the specification rules
    its moves fired so far (both for reporting only: not part of `key`, so hypotheses differing
    only there merge, keeping the first one's).
    """

    state: CoordinatorState
    queues: tuple[tuple[str, tuple[Pending, ...]], ...] = ()
    outbox: tuple[tuple[Ref, tuple[ResponseBody, ...]], ...] = ()
    binding: Binding = field(default_factory=Binding)
    closed: frozenset[str] = frozenset()
    origins: tuple[tuple[Ref, int, tuple[str, ...]], ...] = ()
    # Requests taken as a tolerated deviation makes them (`Pending.alternative`), until answered.
    deviated: tuple[Ref, ...] = ()
    fired: frozenset[str] = frozenset()
    # The time of the latest move taken (a request acts at the time it was seen, a timer at
    # its deadline or, fired after a later move, at that move's time): not part of `key`.
    clock: int = 0

    def origin(self, ref: Ref) -> tuple[int, tuple[str, ...]] | None:
        """When, and by which specification rules, the response to `ref` was produced."""
        for key, at, rules in self.origins:
            if key == ref:
                return at, rules
        return None

    # Built field by field, not with dataclasses.replace: these run for every hypothesis on
    # every observation, and replace costs several times more.
    def with_queues(self, queues: tuple[tuple[str, tuple[Pending, ...]], ...]) -> Hypothesis:
        """This hypothesis with other request queues."""
        return Hypothesis(
            self.state,
            queues,
            self.outbox,
            self.binding,
            self.closed,
            self.origins,
            self.deviated,
            self.fired,
            self.clock,
        )

    def answered(self, ref: Ref) -> Hypothesis:
        """This hypothesis once the response to `ref` was observed (no longer owed)."""
        if len(self.outbox) == 1 and self.outbox[0][0] == ref and not self.deviated:
            # The common case: the one response owed was this one.
            return Hypothesis(
                self.state,
                self.queues,
                (),
                self.binding,
                self.closed,
                (),
                (),
                self.fired,
                self.clock,
            )
        return Hypothesis(
            self.state,
            self.queues,
            tuple(e for e in self.outbox if e[0] != ref),
            self.binding,
            self.closed,
            tuple(e for e in self.origins if e[0] != ref),
            tuple(r for r in self.deviated if r != ref) if self.deviated else (),
            self.fired,
            self.clock,
        )

    def produced(self, ref: Ref) -> tuple[ResponseBody, ...] | None:
        """The response produced for `ref`, if any."""
        for key, bodies in self.outbox:
            if key == ref:
                return bodies
        return None

    def key(self) -> tuple[Any, ...]:
        """What tells two hypotheses apart: the state and pending responses with every bound id
        spelled the observed way, so hypotheses whose specification numbered the same members
        differently (requests taking effect in another order) are one."""
        spelled = self.binding.observed_spelling()
        return (
            rewrite_strings(self.state, spelled),
            self.queues,
            rewrite_strings(self.outbox, spelled),
            self.closed,
        )


class TooAmbiguous(Exception):
    """More hypotheses than the configured limit: the trace cannot be decided in bounds."""


class Tracker:
    """The hypotheses about one coordinator, advanced event by event."""

    def __init__(self, config: CoordinatorConfig, settings: OracleSettings) -> None:
        self.spec = GroupCoordinatorSpec(config)
        self.settings = settings
        self.hypotheses: list[Hypothesis] = [Hypothesis(self.spec.initial_state())]
        # Requests whose response the oracle stopped waiting for (answered out of turn, or
        # never): a response the specification produces for one later is dropped.
        self.abandoned: set[Ref] = set()
        # Specification steps taken so far, every hypothesis's: the work judging has taken
        # (shrinking an excerpt is budgeted in it).
        self.steps = 0
        # Per binding, the parts already spelled the observed way, and the states (`_key`).
        self._spellings: dict[Binding, tuple[RewriteMemo, dict[int, tuple[Any, _Hashed]]]] = {}
        self._last_armed: tuple[CoordinatorState, tuple[tuple[int, TimerEvent], ...]] | None = None
        self._renamed: dict[tuple[rq.Request, Binding], rq.Request] = {}
        self._bindings: dict[Binding, Binding] = {}

    def fork(self) -> Tracker:
        """An independent copy that goes on from these hypotheses (the memos are shared: they
        only remember results, so sharing them changes none)."""
        forked = copy.copy(self)
        forked.hypotheses = list(self.hypotheses)
        forked.abandoned = set(self.abandoned)
        return forked

    def future_key(self) -> tuple[Any, ...]:
        """Everything of the tracker that decides how it takes what comes next: two trackers
        with equal keys judge the same observations alike. The rules fired so far are left
        out (they are reported, never judged by)."""
        hypotheses = tuple(
            (h.state, h.queues, h.outbox, h.binding, h.closed, h.origins, h.deviated)
            for h in self.hypotheses
        )
        return (hypotheses, frozenset(self.abandoned))

    # -- observations -----------------------------------------------------------------------

    def on_request(self, pending: Pending) -> None:
        """A request was seen: it joins its connection's queue in every hypothesis."""
        connection = pending.ref[0]
        updated = []
        for hypothesis in self.hypotheses:
            queues = dict(hypothesis.queues)
            queues[connection] = (*queues.get(connection, ()), pending)
            updated.append(hypothesis.with_queues(tuple(sorted(queues.items()))))
        self.hypotheses = updated

    def on_close(self, connection: str) -> None:
        """A connection closed: responses still owed to it will never be seen."""
        self.hypotheses = self._unique(
            replace(
                h,
                closed=h.closed | {connection},
                outbox=tuple(entry for entry in h.outbox if entry[0][0] != connection),
                origins=tuple(entry for entry in h.origins if entry[0][0] != connection),
            )
            for h in self.hypotheses
        )

    def explain_response(
        self, ref: Ref, now: int
    ) -> list[tuple[Hypothesis, tuple[ResponseBody, ...]]]:
        """Every hypothesis, advanced as little as possible, in which the response to `ref`
        has been produced by time `now`, with that response."""
        reached = self._search(now, lambda h: h.produced(ref) is not None)
        return [(h, h.produced(ref) or ()) for h in reached]

    def explain_early(
        self, ref: Ref, until: int
    ) -> list[tuple[Hypothesis, tuple[ResponseBody, ...]]]:
        """The hypotheses in which the response to `ref` is produced by the fewest moves, timers
        allowed to fire up to time `until` (ahead of the observation): how the specification
        would have answered a response that came too early. Empty if none within bounds."""
        frontier = self.hypotheses
        explored = 0
        while frontier and explored <= self.settings.max_hypotheses:
            reached = [h for h in frontier if h.produced(ref) is not None]
            if reached:
                return [(h, h.produced(ref) or ()) for h in self._unique(reached)]
            frontier = self._unique([m for h in frontier for m in self._moves(h, until)])
            explored += len(frontier)
        return []

    def apply(self, event: PartitionEvent, now: int, held: Ref | None = None) -> None:
        """Every hypothesis after `event` (an offsets partition unloaded or loaded, as the
        coordinators' answers showed) at time `now`; hypotheses it does not apply to stay.
        What time `now` forces took effect before the event (a request seen longer than the
        reorder window ago, a timer overdue by more than the slack); a request or timer not
        forced yet may have taken effect before the event or after it, and both are kept (a
        JoinGroup parked before an unload is answered NOT_COORDINATOR by it, and one arriving
        after by the coordinator check, but only the first created its group). The request
        `held` takes effect after it (a broker answered it as the new coordinator)."""
        updated = []
        for hypothesis in self._reachable(now, held):
            try:
                self.steps += 1
                outcomes = self.spec.step(hypothesis.state, event, now)
            except EventNotEnabledError:
                updated.append(hypothesis)
                continue
            for outcome in outcomes:
                produced = [
                    ((r.ref.connection, r.ref.correlation_id), r.body) for r in outcome.responses
                ]
                updated.append(
                    self._after(
                        hypothesis, outcome.state, hypothesis.queues, produced, now, outcome.rules
                    )
                )
        self.hypotheses = self._unique(updated)

    def _reachable(self, now: int, held: Ref | None = None) -> list[Hypothesis]:
        """Every hypothesis that moves by time `now` reach with nothing overdue, the request
        `held` not taken; deduplicated."""
        found: list[Hypothesis] = []
        frontier = self.hypotheses
        explored = 0
        while frontier:
            found.extend(h for h in frontier if not self._overdue(h, now))
            frontier = self._unique(
                m for h in frontier for m in self._moves(h, now) if not _took(h, m, held)
            )
            explored += len(frontier)
            if explored > self.settings.max_hypotheses:
                raise TooAmbiguous(
                    f"more than {self.settings.max_hypotheses} hypotheses; raise --max-hypotheses "
                    "or lower --reorder-window-ms / --timer-slack-ms"
                )
        return self._unique(found)

    def settle(self, now: int) -> None:
        """Advance every hypothesis past what time `now` forces (overdue timers and requests)."""
        self.hypotheses = self._search(now, lambda h: True)

    def keep(self, ref: Ref, survivors: list[Hypothesis]) -> None:
        """The hypotheses left after the response to `ref` was observed."""
        left = [h.answered(ref) for h in survivors]
        if self.settings.optimized:
            left = [self._interned(h) for h in left]
        self.hypotheses = self._unique(left) if len(left) > 1 else left

    def _interned(self, hypothesis: Hypothesis) -> Hypothesis:
        """`hypothesis` holding the one remembered binding equal to its own, so that the memos
        keyed by bindings find it by identity, not by comparing every pair of ids."""
        binding = self._bindings.get(hypothesis.binding)
        if binding is None:
            if len(self._bindings) >= BINDINGS_LIMIT:
                self._bindings.clear()  # bounds memory; forgetting changes no result
            self._bindings[hypothesis.binding] = hypothesis.binding
            return hypothesis
        if binding is hypothesis.binding:
            return hypothesis
        h = hypothesis
        return Hypothesis(
            h.state, h.queues, h.outbox, binding, h.closed, h.origins, h.deviated, h.fired, h.clock
        )

    def abandon(self, ref: Ref) -> None:
        """Stop waiting for the response to `ref`: dropped where produced, and when produced."""
        self.abandoned.add(ref)
        self.keep(ref, self.hypotheses)

    # -- the search ---------------------------------------------------------------------------

    def _unique(self, hypotheses: Iterable[Hypothesis]) -> list[Hypothesis]:
        """The hypotheses without repeats (by `Hypothesis.key`), each first one kept."""
        found: dict[tuple[Any, ...], Hypothesis] = {}
        if not self.settings.optimized:
            for hypothesis in hypotheses:
                found.setdefault(hypothesis.key(), hypothesis)
            return list(found.values())
        listed = list(hypotheses)
        shapes = [_shape(h) for h in listed]
        alike = Counter(shapes)
        for hypothesis, shape in zip(listed, shapes, strict=True):
            # Equal keys have equal shapes: a hypothesis alone in its shape needs no key.
            key = (shape,) if alike[shape] == 1 else self._key(hypothesis)
            found.setdefault(key, hypothesis)
        return list(found.values())

    def _key(self, hypothesis: Hypothesis) -> tuple[Any, ...]:
        """`hypothesis.key()`, computed incrementally: the renamed parts of states are
        remembered per binding, and each renamed state's hash once (see `_Hashed`)."""
        binding, state = hypothesis.binding, hypothesis.state
        spellings = self._spellings.get(binding)
        if spellings is None or len(spellings[0]) + len(spellings[1]) > SPELLING_MEMO_LIMIT:
            if len(self._spellings) >= SPELLING_MEMOS:
                self._spellings.clear()  # bounds memory; forgetting changes no result
            spellings = self._spellings[binding] = ({}, {})
        memo, states = spellings
        spelled = binding.observed_spelling()
        known = states.get(id(state))
        if known is None or known[0] is not state:
            known = (state, _Hashed(rewrite_strings(state, spelled, memo) if spelled else state))
            states[id(state)] = known
        outbox = rewrite_strings(hypothesis.outbox, spelled, memo) if spelled else hypothesis.outbox
        return (known[1], hypothesis.queues, outbox, hypothesis.closed)

    def _search(self, now: int, goal: Any) -> list[Hypothesis]:
        """Breadth-first over moves from every hypothesis until each reaches `goal` with no
        overdue obligation; those reached, deduplicated."""
        reached: list[Hypothesis] = []
        frontier = self.hypotheses
        explored = 0
        while frontier:
            following: list[Hypothesis] = []
            for hypothesis in frontier:
                if goal(hypothesis) and not self._overdue(hypothesis, now):
                    reached.append(hypothesis)
                else:
                    following.extend(self._moves(hypothesis, now))
            # Deduplicating hashes whole states: worth it only where hypotheses branched.
            frontier = self._unique(following) if len(following) > 1 else following
            explored += len(frontier)
            if explored > self.settings.max_hypotheses:
                raise TooAmbiguous(
                    f"more than {self.settings.max_hypotheses} hypotheses; raise --max-hypotheses "
                    "or lower --reorder-window-ms / --timer-slack-ms"
                )
        return self._unique(reached) if len(reached) > 1 else reached

    def _overdue(self, hypothesis: Hypothesis, now: int) -> bool:
        window = self.settings.reorder_window_ms
        for connection, queue in hypothesis.queues:
            if queue and connection not in hypothesis.closed and queue[0].ts + window < now:
                return True
        slack = self.settings.timer_slack_ms
        return any(deadline + slack < now for deadline, _ in self._armed(hypothesis.state))

    def _armed(self, state: CoordinatorState) -> tuple[tuple[int, TimerEvent], ...]:
        """The state's armed timers; the last state's remembered (`_overdue`, then `_moves`)."""
        if not self.settings.optimized:
            return self.spec.armed_timers(state)
        last = self._last_armed
        if last is not None and last[0] is state:
            return last[1]
        timers = self.spec.armed_timers(state)
        self._last_armed = (state, timers)
        return timers

    def _moves(self, hypothesis: Hypothesis, now: int) -> Iterator[Hypothesis]:
        """Every hypothesis one move later: a queued request takes effect, or a timer fires."""
        timers = self._armed(hypothesis.state)
        slack = self.settings.timer_slack_ms
        # A request seen more than the reorder window before a timer's deadline, or before
        # another request was seen, took effect before the timer fired or that request did.
        window = self.settings.reorder_window_ms
        latest = min(
            (q[0].ts + window for c, q in hypothesis.queues if q and c not in hypothesis.closed),
            default=None,
        )
        for connection, queue in hypothesis.queues:
            if not queue:
                continue
            head = queue[0]
            # A timer overdue when the request was seen fired before the request took effect.
            if any(deadline + slack < head.ts for deadline, _ in timers):
                continue
            if latest is not None and latest < head.ts:
                continue
            yield from self._take(hypothesis, connection, head)
        # A timer overdue at another's deadline fired before it (timers fire within the slack):
        # without this, a later timer could release a response first, and the response would
        # look answered when that timer fired rather than when the earlier one did.
        earliest = min((deadline for deadline, _ in timers), default=None)
        for deadline, event in timers:
            if deadline <= now and (latest is None or deadline <= latest):
                if earliest is not None and earliest + slack < deadline:
                    continue
                yield from self._fire(hypothesis, deadline, event)

    def _take(self, hypothesis: Hypothesis, connection: str, head: Pending) -> Iterator[Hypothesis]:
        # A request acts at the time it was seen and a timer at its deadline, whichever order
        # they take effect in (a timer fired after a later request excepted, `_fire`): the
        # outcome of a move then does not depend on how late the tracker made it, so
        # hypotheses that differ only in that coincide.
        at = head.ts
        queues = tuple(
            (c, q[1:] if c == connection else q)
            for c, q in hypothesis.queues
            if c != connection or len(q) > 1
        )
        for state, produced, rules in self._run(hypothesis, head, head.requests, at):
            yield self._after(hypothesis, state, queues, produced, at, rules)
        if head.alternative is not None:
            for state, produced, rules in self._run(hypothesis, head, head.alternative[0], at):
                taken = self._after(hypothesis, state, queues, produced, at, rules)
                yield replace(taken, deviated=(*taken.deviated, head.ref))

    def _run(
        self, hypothesis: Hypothesis, head: Pending, observed: tuple[rq.Request, ...], at: int
    ) -> Iterator[tuple[CoordinatorState, list[tuple[Ref, Any]], tuple[str, ...]]]:
        """Every outcome of the requests `observed` (one observed request's) taking effect."""
        binding = hypothesis.binding
        requests = [self._in_spec_ids(r, binding) for r in observed]
        runs: list[
            tuple[
                CoordinatorState,
                tuple[ResponseBody, ...],
                tuple[tuple[Ref, ResponseBody], ...],
                tuple[str, ...],
            ]
        ] = [(hypothesis.state, (), (), ())]
        spec_ref = rq.RequestRef(*head.ref)
        for request in requests:
            following = []
            for state, own, others, _ in runs:
                self.steps += 1
                for outcome in self.spec.step(state, rq.Received(spec_ref, request), at):
                    mine = tuple(
                        r.body
                        for r in outcome.responses
                        if (r.ref.connection, r.ref.correlation_id) == head.ref
                    )
                    rest = tuple(
                        ((r.ref.connection, r.ref.correlation_id), r.body)
                        for r in outcome.responses
                        if (r.ref.connection, r.ref.correlation_id) != head.ref
                    )
                    following.append((outcome.state, own + mine, others + rest, outcome.rules))
            runs = following
        for state, own, others, rules in runs:
            produced: list[tuple[Ref, Any]] = list(others)
            if own:
                produced.append((head.ref, own[0]) if len(own) == 1 else (head.ref, own))
            yield state, produced, rules

    def _in_spec_ids(self, request: rq.Request, binding: Binding) -> rq.Request:
        """`request` with its member ids spelled the specification's way under `binding`;
        remembered, since a member sends the same heartbeat over and over."""
        if not self.settings.optimized:
            return rename_request_member_ids(request, binding.to_spec)
        key = (request, binding)
        renamed = self._renamed.get(key)
        if renamed is None:
            if len(self._renamed) >= RENAMED_LIMIT:
                self._renamed.clear()  # bounds memory; forgetting changes no result
            renamed = self._renamed[key] = rename_request_member_ids(request, binding.to_spec)
        return renamed

    def _fire(
        self, hypothesis: Hypothesis, deadline: int, event: TimerEvent
    ) -> Iterator[Hypothesis]:
        self.steps += 1
        # A timer that fires after a move taken past its deadline (a request seen later, which
        # the slack let go first) fired then, not at its deadline: the timers it arms count
        # from there, as the coordinator's do (Kafka re-arms an extended initial delay from
        # the moment it fired).
        at = max(deadline, hypothesis.clock)
        for outcome in self.spec.step(hypothesis.state, event, at):
            produced = [
                ((r.ref.connection, r.ref.correlation_id), r.body) for r in outcome.responses
            ]
            yield self._after(
                hypothesis, outcome.state, hypothesis.queues, produced, at, outcome.rules
            )

    def _after(
        self,
        hypothesis: Hypothesis,
        state: CoordinatorState,
        queues: tuple[tuple[str, tuple[Pending, ...]], ...],
        produced: Iterable[tuple[Ref, Any]],
        at: int,
        rules: tuple[str, ...],
    ) -> Hypothesis:
        outbox = list(hypothesis.outbox)
        origins = list(hypothesis.origins)
        for ref, body in produced:
            if ref[0] in hypothesis.closed or ref in self.abandoned:
                continue
            bodies = body if isinstance(body, tuple) else (body,)
            outbox.append((ref, bodies))
            origins.append((ref, at, rules))
        return Hypothesis(
            state,
            queues,
            tuple(outbox),
            hypothesis.binding,
            hypothesis.closed,
            tuple(origins),
            hypothesis.deviated,
            # Most steps fire rules fired before: the same set, not a copy.
            hypothesis.fired
            if hypothesis.fired.issuperset(rules)
            else hypothesis.fired.union(rules),
            max(hypothesis.clock, at),
        )


def _took(before: Hypothesis, after: Hypothesis, ref: Ref | None) -> bool:
    """Whether the move from `before` to `after` took the request `ref` off its queue."""
    if ref is None:
        return False
    queued = dict(before.queues).get(ref[0], ())
    if not queued or queued[0].ref != ref:
        return False
    left = dict(after.queues).get(ref[0], ())
    return not left or left[0].ref != ref


def _shape(hypothesis: Hypothesis) -> tuple[Any, ...]:
    """A cheap function of `Hypothesis.key`: hypotheses of other shapes have other keys."""
    queues = tuple((connection, len(queue)) for connection, queue in hypothesis.queues)
    return (queues, hypothesis.closed, len(hypothesis.outbox))


class _Hashed:
    """A value that hashes once: equal exactly when the values are, for keys hashed often."""

    __slots__ = ("_hash", "value")

    def __init__(self, value: Any) -> None:
        self.value = value
        self._hash = hash(value)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Hashed) and (
            other.value is self.value or (other._hash == self._hash and other.value == self.value)
        )
