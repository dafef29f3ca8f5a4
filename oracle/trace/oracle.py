"""The oracle's Python API: observe a coordinator's requests and responses, learn where it departs.

    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
    oracle.request("10.0.0.7:53122", 4, JOIN_GROUP, 9, body, ts_ms=now_ms(), client_id="c-1")
    divergence = oracle.response("10.0.0.7:53122", 4, JOIN_GROUP, 9, response_body, ts_ms=now_ms())

An implementation calls it as it serves (in process), or `validate_trace` replays a trace file.
Bodies are Kafka-shaped dicts as in docs/trace-format.md. Every divergence is kept: after one,
the oracle resynchronizes with what was observed (`adopt`) and goes on judging. `finish` at the
end flags requests that were due an answer long before and never got one.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.coordinator import remap_coordinator_error
from groupspec.spec.state import Group, PendingMember
from groupspec.vocabulary import requests as rq
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.responses import ResponseBody
from groupspec.wire.group_apis import (
    JOIN_GROUP,
    LIST_GROUPS,
    BodyError,
    UnmodelledRequest,
    client_host_of,
    read_requests,
    response_body,
)
from groupspec.wire.trace_format import API_NAMES, CLOSE, REQUEST, TraceEvent

from .adopt import ADOPT_EARLY, ADOPT_ERROR, ADOPT_MEMBER_ID, adopt_into
from .binding import Binding
from .comparison import MEMBER_ID_REQUIRED, comparable
from .coordinators import Coordinators, broker_of
from .divergence_text import error_names, first_difference, render_response, render_state
from .mid_stream import MidStream
from .profiles import ERROR_PREFIX, FIRST_GENERATION, NO_MEMBER_ID_REQUIRED, DeviationProfile
from .tracker import IGNORE_FOREIGN, Hypothesis, OracleSettings, Pending, Ref, Tracker

# What kind of departure a divergence is (its `kind`).
NOT_ALLOWED = "response"  # a response the specification does not allow
EARLY = "early"  # a response the specification would not have sent yet
UNDECODABLE = "undecodable"  # a response the recorder could not decode
UNANSWERED = "unanswered"  # a request never answered, its connection open
LATE = "late"  # an allowed response, but later than `late_response_ms`
# How far ahead of an early response the specification's timers may be fired to answer it:
# the nearest of these that does (so timers due later, such as sessions, stay armed).
EARLY_HORIZONS_MS = tuple(500 * 2**n for n in range(12))  # 0.5 s … 17 min
DROPPED = f"{ADOPT_EARLY}: the specification's response to it is dropped"


class ObservationError(Exception):
    """An observation the oracle cannot read (bad body, response without request): bad input."""


@dataclass(frozen=True)
class Divergence:
    """Where the observed coordinator did what the specification does not allow."""

    line: int
    ts_ms: float
    connection: str
    correlation_id: int
    api: str
    version: int
    reason: str
    observed: dict[str, Any] | None
    allowed: tuple[dict[str, Any], ...]
    state: str
    kind: str = NOT_ALLOWED
    field: str = ""
    rule: str = ""
    resync: str = ""
    tolerable_by: str = ""

    @property
    def group_key(self) -> tuple[str, str, str, str]:
        """What divergences of one kind share: the API, the kind, the field, the rule."""
        return (self.api, self.kind, self.field, self.rule)

    def to_json(self) -> dict[str, Any]:
        """The divergence as a JSON object."""
        return {
            "kind": self.kind,
            "field": self.field,
            "rule": self.rule,
            "resync": self.resync,
            "tolerable_by": self.tolerable_by,
            "line": self.line,
            "ts": self.ts_ms,
            "conn": self.connection,
            "corr": self.correlation_id,
            "api": self.api,
            "ver": self.version,
            "reason": self.reason,
            "observed": self.observed,
            "allowed": list(self.allowed),
            "state": self.state,
        }


@dataclass(frozen=True)
class Tolerated:
    """A deviation the profile tolerates, where it was seen."""

    name: str
    line: int
    api: str


@dataclass
class OracleCounts:
    """What an oracle has seen so far."""

    events: int = 0
    judged: int = 0
    requests: int = 0
    responses_checked: int = 0
    skipped: int = 0
    max_hypotheses: int = 1
    skipped_apis: dict[str, int] = field(default_factory=dict)
    foreign_groups: int = 0
    # Mid-stream (`OracleSettings.mid_stream`): events of groups not learned yet, not judged,
    # and the groups learned.
    held: int = 0
    groups_learned: int = 0
    pending_members_learned: int = 0
    # Partition events applied as coordinators' answers showed them (`coordinators`).
    coordinator_moves: int = 0


class Unexplained(NamedTuple):
    """An observed response no specification state allows: the request, the states that
    answered it otherwise (with their responses), and the response as seen and as compared."""

    pending: Pending
    candidates: list[tuple[Hypothesis, tuple[ResponseBody, ...]]]
    body: dict[str, Any]
    observed: Any


class Oracle:
    """Judges one coordinator's group traffic, observation by observation."""

    def __init__(
        self,
        config: CoordinatorConfig | None = None,
        settings: OracleSettings | None = None,
        profile: DeviationProfile | None = None,
    ) -> None:
        self.tracker = Tracker(config or CoordinatorConfig(), settings or OracleSettings())
        self.profile = profile or DeviationProfile()
        self.counts = OracleCounts()
        self.divergences: list[Divergence] = []
        self.tolerated: list[Tolerated] = []
        self._origin: float | None = None
        self._skipped: set[Ref] = set()
        self._requests: dict[Ref, Pending] = {}
        self._named_groups: set[str] = set()
        self._last = 0
        self.mid_stream = MidStream() if self.tracker.settings.mid_stream else None
        self.coordinators = Coordinators()
        # Requests sent to a broker that does not coordinate their group (see `coordinators`).
        self._elsewhere: dict[Ref, Pending] = {}
        self._partitions: dict[str, int] = {}

    @property
    def divergence(self) -> Divergence | None:
        """The first divergence, if any."""
        return self.divergences[0] if self.divergences else None

    @property
    def judged_fraction(self) -> float:
        """The share of events judged against a specification state (1.0 with no events)."""
        return self.counts.judged / self.counts.events if self.counts.events else 1.0

    @property
    def rules_exercised(self) -> frozenset[str]:
        """The specification rules the observed coordinator was seen to follow: those every
        hypothesis still held fired on its way here (adopt steps are not rules)."""
        fired = [hypothesis.fired for hypothesis in self.tracker.hypotheses]
        return frozenset.intersection(*fired) if fired else frozenset()

    def fork(self) -> Oracle:
        """An independent copy that judges on from here: what it observes next leaves this one
        as it is (to replay variants of one trace from a shared prefix)."""
        forked = copy.copy(self)
        forked.tracker = self.tracker.fork()
        forked.counts = copy.copy(self.counts)
        forked.counts.skipped_apis = dict(self.counts.skipped_apis)
        forked.divergences = list(self.divergences)
        forked.tolerated = list(self.tolerated)
        forked._skipped = set(self._skipped)
        forked._requests = dict(self._requests)
        forked._named_groups = set(self._named_groups)
        forked.mid_stream = self.mid_stream.copy() if self.mid_stream is not None else None
        forked.coordinators = self.coordinators.copy()
        forked._elsewhere = dict(self._elsewhere)
        forked._partitions = dict(self._partitions)
        return forked

    def future_key(self) -> tuple[Any, ...]:
        """Everything that decides how the oracle judges what comes next: two oracles with
        equal keys, given the same observations, find the same divergences from there on,
        whatever they observed before. What was found so far and the counts are left out."""
        return (
            self.tracker.future_key(),
            self._origin,
            self._last,
            frozenset(self._skipped),
            tuple(self._requests.items()),  # in order: `_answered` looks for earlier requests
            frozenset(self._named_groups),
            self.mid_stream.future_key() if self.mid_stream is not None else None,
            self.coordinators.future_key(),
            tuple(self._elsewhere.items()),
        )

    # -- observations -------------------------------------------------------------------------

    def observe(self, event: TraceEvent, line: int = 0) -> Divergence | None:
        """Take one trace event; the divergence if this event is where the coordinator departs."""
        if event.direction == REQUEST:
            self.request(
                event.connection,
                event.correlation_id,
                event.api_key,
                event.api_version,
                event.body or {},
                event.ts_ms,
                event.client_id,
                line,
            )
            return None
        if event.direction == CLOSE:
            self.close(event.connection, event.ts_ms)
            return None
        if event.undecodable is not None:
            return self.undecodable_response(
                event.connection,
                event.correlation_id,
                event.api_key,
                event.api_version,
                event.undecodable,
                event.ts_ms,
                line,
            )
        return self.response(
            event.connection,
            event.correlation_id,
            event.api_key,
            event.api_version,
            event.body or {},
            event.ts_ms,
            line,
        )

    def request(
        self,
        connection: str,
        correlation_id: int,
        api_key: int,
        version: int,
        body: dict[str, Any],
        ts_ms: float,
        client_id: str | None = None,
        line: int = 0,
    ) -> None:
        """A client sent a request."""
        self.counts.events += 1
        ref = (connection, correlation_id)
        try:
            requests = read_requests(api_key, version, body, client_id, client_host_of(connection))
        except UnmodelledRequest:
            self._skip(ref, API_NAMES.get(api_key, str(api_key)))
            return
        except BodyError as error:
            raise ObservationError(
                f"{API_NAMES.get(api_key, api_key)} v{version} request: {error}"
            ) from None
        if self.coordinators.unowned and self._finds_a_moving_group(requests):
            # Any broker may answer it, naming the old coordinator, the new one or none yet.
            self._skip(ref, "FindCoordinator (its group's coordinator moving)")
            return
        pending = Pending(
            ref, api_key, version, requests, self._time(ts_ms), line, self._alternative(requests)
        )
        if self.mid_stream is not None and self.mid_stream.holds(api_key, _group_ids(requests)):
            self.mid_stream.held[ref] = pending
            self.counts.held += 1
            return
        self.counts.requests += 1
        self.counts.judged += 1
        partition = self._partition(requests)
        if partition is not None and self.coordinators.elsewhere(partition, broker_of(connection)):
            self._elsewhere[ref] = pending
            return
        first = requests[0] if len(requests) == 1 else None
        if isinstance(first, (rq.HeartbeatRequest, rq.OffsetCommitRequest, rq.SyncGroupRequest)):
            self._named_groups.add(first.group_id)  # the common case, without a set built
        else:
            self._named_groups.update(_group_ids(requests))
        self._requests[ref] = pending
        if self.mid_stream is not None and first is not None:
            self._learn_pending_member(first, pending.ts)
        self.tracker.on_request(pending)

    def response(
        self,
        connection: str,
        correlation_id: int,
        api_key: int,
        version: int,
        body: dict[str, Any],
        ts_ms: float,
        line: int = 0,
    ) -> Divergence | None:
        """The coordinator answered; returns the divergence if the answer is not allowed (the
        oracle then resynchronizes with it and goes on)."""
        if self._learning(connection, correlation_id, body, ts_ms):
            return None
        if self._follow((connection, correlation_id), body, ts_ms):
            return None
        pending = self._answered(connection, correlation_id, ts_ms, line)
        if pending is None:
            return None
        if api_key == LIST_GROUPS and self.tracker.settings.foreign_groups == IGNORE_FOREIGN:
            body = self._without_foreign_groups(body)
        try:
            observed = comparable(api_key, version, body)
        except BodyError as error:
            raise ObservationError(
                f"{API_NAMES.get(api_key, api_key)} v{version} response: {error}"
            ) from None
        ref = pending.ref
        now = self._time(ts_ms)
        candidates = self.tracker.explain_response(ref, now)
        survivors: list[Hypothesis] = []
        allowed: dict[Any, tuple[Binding, tuple[ResponseBody, ...], Any]] = {}
        for hypothesis, bodies in candidates:
            expected = comparable(
                api_key, version, response_body(bodies, version, pending.requests)
            )
            extended = list(hypothesis.binding.unify(expected, observed))
            if not extended:
                allowed.setdefault(expected, (hypothesis.binding, bodies, hypothesis))
            survivors.extend(_rebind(hypothesis, b) for b in extended)
        self.counts.responses_checked += 1
        if survivors:
            if pending.alternative is not None:
                self._note_alternative(pending, survivors, line)
            late = self._late(pending, survivors, now, ts_ms, body, line)
            self.tracker.keep(ref, survivors)
            self.counts.max_hypotheses = max(
                self.counts.max_hypotheses, len(self.tracker.hypotheses)
            )
            return late
        unexplained = Unexplained(pending, candidates, body, observed)
        if candidates and self._tolerate(unexplained, line):
            return None
        if candidates:
            reason = "the response is not one the specification allows here"
            shown = tuple(
                render_response(response_body(bodies, version, pending.requests), binding)
                for binding, bodies, _ in allowed.values()
            )
            shown_hypothesis = candidates[0][0]
            origin = shown_hypothesis.origin(ref)
            rule = "+".join(origin[1]) if origin else ""
            field = first_difference(shown[0], body) or "" if shown else ""
            kind = NOT_ALLOWED
            hint = self._tolerable_by(unexplained)
        else:
            reason = "the specification sends no response to this request by this time"
            shown, rule, field, kind, hint = (), "", "", EARLY, ""
            # Nothing answers the request: show the coordinator with everything due done.
            self.tracker.settle(now)
            shown_hypothesis = self.tracker.hypotheses[0]
        state = render_state(
            shown_hypothesis.state, _group_ids(pending.requests), shown_hypothesis.binding
        )
        resync = self._resync(unexplained)
        return self._report(
            pending, line, ts_ms, reason, body, kind, field, shown, state, rule, resync, hint
        )

    def undecodable_response(
        self,
        connection: str,
        correlation_id: int,
        api_key: int,
        version: int,
        problem: str,
        ts_ms: float,
        line: int = 0,
    ) -> Divergence | None:
        """The coordinator answered with bytes that do not decode as the request's response: a
        divergence (no client can act on it); the request counts as answered."""
        held = self.mid_stream.release((connection, correlation_id)) if self.mid_stream else None
        if held is not None:
            self.counts.events += 1
            self.counts.judged += 1  # undecodable whatever the group's state
            pending: Pending | None = held
        else:
            pending = self._answered(connection, correlation_id, ts_ms, line)
        if pending is None:
            return None
        self._time(ts_ms)
        self.counts.responses_checked += 1
        self.tracker.abandon(pending.ref)
        return self._report(
            pending,
            line,
            ts_ms,
            f"the response does not decode: {problem}",
            None,
            UNDECODABLE,
            "(undecodable)",
            resync=DROPPED,
        )

    def finish(self, ts_ms: float | None = None) -> list[Divergence]:
        """The trace ended (at `ts_ms`, or at its last observation): each request on an open
        connection whose response the specification had produced `late_response_ms` before
        the end, in every state, was never answered. Returns those divergences."""
        if self._origin is None:
            return []
        end = self._time(ts_ms) if ts_ms is not None else None
        found = []
        open_requests = list(self._requests.values())
        if not open_requests:
            return []
        now = end if end is not None else max(p.ts for p in open_requests)
        now = max(now, self._last)
        self.tracker.settle(now)
        bound = self.tracker.settings.late_response_ms
        for pending in open_requests:
            produced = [h.origin(pending.ref) for h in self.tracker.hypotheses]
            if not produced or any(origin is None for origin in produced):
                continue
            due = max(origin[0] for origin in produced if origin is not None)
            due += self._send_tolerance()
            if now - due <= bound:
                continue
            found.append(self._unanswered(pending, f"due at {due} ms, the trace ends at {now} ms"))
        return found

    # -- helpers ------------------------------------------------------------------------------

    def _skip(self, ref: Ref, name: str) -> None:
        """The request `ref` and its response are not judged: counted under `name`."""
        self._skipped.add(ref)
        self.counts.skipped += 1
        self.counts.skipped_apis[name] = self.counts.skipped_apis.get(name, 0) + 1

    def _finds_a_moving_group(self, requests: tuple[rq.Request, ...]) -> bool:
        """Whether these are FindCoordinator requests for a group whose coordinator answered
        NOT_COORDINATOR and no broker took it over yet."""
        return any(
            isinstance(r, rq.FindCoordinatorRequest)
            and self.tracker.spec.partition_for(r.key) in self.coordinators.unowned
            for r in requests
        )

    def _partition(self, requests: tuple[rq.Request, ...]) -> int | None:
        """The offsets partition of the groups `requests` name, if they are one request naming
        groups of one partition: a group's request, or DescribeGroups or DeleteGroups."""
        if len(requests) != 1:
            return None
        group_id = getattr(requests[0], "group_id", None)
        named = (group_id,) if isinstance(group_id, str) else getattr(requests[0], "group_ids", ())
        found = {self._partition_of(name) for name in named}
        return found.pop() if len(found) == 1 else None

    def _partition_of(self, group_id: str) -> int:
        """The offsets partition of `group_id` (remembered: asked for every request)."""
        partition = self._partitions.get(group_id)
        if partition is None:
            partition = self._partitions[group_id] = self.tracker.spec.partition_for(group_id)
        return partition

    def _follow(self, ref: Ref, body: dict[str, Any], ts_ms: float) -> bool:
        """Follow the group of the request `ref` across coordinators (`coordinators`) on its
        response `body`; True if the response was judged here (NOT_COORDINATOR from a broker
        that does not coordinate the group, as allowed)."""
        elsewhere = self._elsewhere.pop(ref, None)
        pending = elsewhere or self._requests.get(ref)
        partition = self._partition(pending.requests) if pending is not None else None
        if pending is None or partition is None:
            return False
        error = _coordinator_error(body)
        broker = broker_of(ref[0])
        if elsewhere is not None and error == ErrorCode.NOT_COORDINATOR:
            self.counts.events += 1
            self.counts.judged += 1
            self.counts.responses_checked += 1
            self._time(ts_ms)
            return True
        loading = partition in self.tracker.hypotheses[0].state.loading_partitions
        held: Ref | None = None  # an unload may have answered the request: it was parked
        if error == ErrorCode.NOT_COORDINATOR:
            events: list[Any] = list(self.coordinators.unloaded(partition, broker))
        else:
            held = ref  # answered by the broker taking the partition over: after the move
            # While loading, Kafka answers some APIs otherwise than LOAD_IN_PROGRESS (a Heartbeat
            # NONE, a SyncGroup REBALANCE_IN_PROGRESS): such an answer does not end the load.
            load_in_progress = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
            as_loading = remap_coordinator_error(pending.requests[0], load_in_progress)
            is_loading = error == load_in_progress or (loading and error == as_loading)
            events = self.coordinators.loaded(partition, broker, is_loading, loading)
        now = self._time(ts_ms) if events else 0
        for event in events:
            self.tracker.apply(event, now, held)
        self.counts.coordinator_moves += len(events)
        if elsewhere is not None:  # this broker coordinates the group now: judge it so
            self._requests[ref] = elsewhere
            self.tracker.on_request(elsewhere)
        return False

    def _learn_pending_member(self, request: rq.Request, now: int) -> None:
        """`learn.pending-member` (see `mid_stream`): the id a JoinGroup presents becomes a
        pending member in each state whose group does not know it."""
        assert self.mid_stream is not None
        if not isinstance(request, rq.JoinGroupRequest) or not request.member_id:
            return
        changed = False
        updated = []
        for h in self.tracker.hypotheses:
            group = h.state.group(getattr(request, "group_id", ""))
            spec_id = h.binding.to_spec(request.member_id)
            if group is None or not self.mid_stream.handed_out_before(request, now, group, spec_id):
                updated.append(h)
                continue
            changed = True
            pending = PendingMember(request.member_id, request.session_timeout_ms)
            group = group.with_pending_member(pending)
            binding = _with_ids(h.binding, [request.member_id])
            updated.append(replace(h, state=h.state.with_group(group), binding=binding))
        if changed:
            self.counts.pending_members_learned += 1
            self.tracker.hypotheses = updated

    def _learning(
        self, connection: str, correlation_id: int, body: dict[str, Any], ts_ms: float
    ) -> bool:
        """Whether the response answers a held request (mid-stream): then it is not judged,
        and it may teach the oracle its group (`learn.group`)."""
        if self.mid_stream is None:
            return False
        pending = self.mid_stream.release((connection, correlation_id))
        if pending is None:
            return False
        self.counts.events += 1
        self.counts.held += 1
        group = self.mid_stream.learn(pending, body, self._time(ts_ms))
        if group is not None:
            self.counts.groups_learned += 1
            self._named_groups.add(group.group_id)
            self.tracker.hypotheses = [
                replace(
                    h,
                    state=h.state.with_group(group),
                    binding=_with_ids(h.binding, _member_ids(group)),
                )
                for h in self.tracker.hypotheses
            ]
            for released in self.mid_stream.after_learning(group.group_id, group.generation_id):
                self.counts.held -= 1  # judged after all
                self.counts.requests += 1
                self.counts.judged += 1
                self._requests[released.ref] = released
                self.tracker.on_request(released)
        return True

    def _answered(
        self, connection: str, correlation_id: int, ts_ms: float, line: int
    ) -> Pending | None:
        """The request a response answers (None for an unmodelled one); requests before it on
        its connection were never answered (Kafka answers a connection's requests in order)."""
        self.counts.events += 1
        ref = (connection, correlation_id)
        if ref in self._skipped:
            self._skipped.discard(ref)
            return None
        earlier = []
        for key, waiting in self._requests.items():  # in the order the requests were seen
            if key == ref:
                break
            if key[0] == connection:
                earlier.append(waiting)
        pending = self._requests.pop(ref, None)
        if pending is None:
            raise ObservationError(
                f"a response to {connection}#{correlation_id} with no request before it"
            )
        self.counts.judged += 1
        for overtaken in earlier:
            self._time(ts_ms)
            self._unanswered(
                overtaken, f"a later request on its connection was answered on line {line}"
            )
        return pending

    def _unanswered(self, pending: Pending, why: str) -> Divergence:
        self._requests.pop(pending.ref, None)
        self.tracker.abandon(pending.ref)
        return self._report(
            pending,
            pending.line,
            pending.ts + (self._origin or 0),
            f"the request was never answered, its connection open ({why})",
            None,
            UNANSWERED,
            "(no response)",
            resync=DROPPED,
        )

    def _late(
        self,
        pending: Pending,
        survivors: list[Hypothesis],
        now: int,
        ts_ms: float,
        body: dict[str, Any],
        line: int,
    ) -> Divergence | None:
        """A divergence if the allowed response came later than the bound after the
        specification produced it, in every surviving state."""
        settings = self.tracker.settings
        bound = settings.late_response_ms
        tolerance = self._send_tolerance()
        # A response is produced no earlier than its request, or a timer within its slack
        # before: most are answered well within the bound, and need no look at the states.
        if now - pending.ts <= bound - settings.timer_slack_ms + tolerance:
            return None
        latest = (
            max(
                (origin[0] for h in survivors if (origin := h.origin(pending.ref)) is not None),
                default=now,
            )
            + tolerance
        )
        if now - latest <= bound:
            return None
        return self._report(
            pending,
            line,
            ts_ms,
            f"the response came {now - latest} ms after the specification sent it at the "
            f"latest (more than --late-response-ms {bound})",
            body,
            LATE,
            "(late)",
        )

    def _send_tolerance(self) -> int:
        """How much later than the moment a hypothesis records the specification may have sent
        a response: the tracker makes a request take effect when it was seen, and a timer fire
        at its deadline, but a request may take effect up to the reorder window later and a
        timer fire up to its slack later. Lateness counts from the latest of these."""
        settings = self.tracker.settings
        return max(settings.reorder_window_ms, settings.timer_slack_ms)

    def _resync(self, unexplained: Unexplained) -> str:
        """Resynchronize with an observed response no state allowed; says how (see `adopt`)."""
        pending, candidates, body, observed = unexplained
        early = ""
        if not candidates:
            for horizon in EARLY_HORIZONS_MS:  # the nearest future that answers it
                candidates = self.tracker.explain_early(pending.ref, self._last + horizon)
                if candidates:
                    break
            if not candidates:
                self.tracker.abandon(pending.ref)
                return (
                    f"{ADOPT_EARLY}: the response is taken as sent; the specification's is dropped"
                )
            early = f"{ADOPT_EARLY}: the specification's timers fired ahead of time to answer; "
        shaped = _kafka_shaped(pending, candidates)
        errors = error_names(body)
        agreeing = [(h, b) for h, b in shaped if error_names(b) == errors]
        kept = agreeing or shaped
        steps: set[str] = set() if agreeing else {ADOPT_ERROR}
        adopted = []
        for hypothesis, expected in kept:
            binding = hypothesis.binding.adopt(
                comparable(pending.api_key, pending.version, expected), observed
            )
            if len(binding) > len(hypothesis.binding):
                steps.add(ADOPT_MEMBER_ID)
            after, taken = adopt_into(hypothesis, pending.api_key, pending.requests, body, binding)
            steps.update(taken)
            adopted.append(after)
        self.tracker.keep(pending.ref, adopted)
        what = "agreeing on the error codes" if agreeing else "(none agrees on the error codes)"
        adopted_steps = ", ".join(sorted(steps)) or "nothing else to adopt"
        return f"{early}kept {len(kept)} of {len(shaped)} states {what}; {adopted_steps}"

    def _without_foreign_groups(self, body: dict[str, Any]) -> dict[str, Any]:
        """A ListGroups response without the groups no request of the trace named so far."""
        groups = body.get("groups")
        if not isinstance(groups, list):
            return body
        kept = [
            g for g in groups if not isinstance(g, dict) or g.get("group_id") in self._named_groups
        ]
        self.counts.foreign_groups += len(groups) - len(kept)
        return {**body, "groups": kept} if len(kept) < len(groups) else body

    # -- deviation profiles -------------------------------------------------------------------

    def _alternative(
        self, requests: tuple[rq.Request, ...]
    ) -> tuple[tuple[rq.Request, ...], str] | None:
        """What the profile lets an observed request be handled as instead (see `profiles`)."""
        if not self.profile.no_member_id_required or len(requests) != 1:
            return None
        request = requests[0]
        if (
            isinstance(request, rq.JoinGroupRequest)
            and request.api_version >= 4
            and request.member_id == ""
            and request.group_instance_id is None
        ):
            return (replace(request, api_version=3),), NO_MEMBER_ID_REQUIRED
        return None

    def _note_alternative(self, pending: Pending, survivors: list[Hypothesis], line: int) -> None:
        """Count the tolerated deviation if only its alternative explains the response."""
        assert pending.alternative is not None
        if all(pending.ref in h.deviated for h in survivors):
            self._tolerated(pending.alternative[1], line, pending)

    def _tolerate(self, unexplained: Unexplained, line: int) -> bool:
        """Whether the profile tolerates the observed response no state allowed; if so the
        deviation is counted and the states take on what it stated (as after a divergence)."""
        pending, candidates, body, observed = unexplained
        kept: list[Hypothesis] = []
        names: set[str] = set()
        for hypothesis, expected in _kafka_shaped(pending, candidates):
            for name, rewritten in _rewrites(self.profile, pending.api_key, expected, body):
                shaped = comparable(pending.api_key, pending.version, rewritten)
                for binding in hypothesis.binding.unify(shaped, observed):
                    adopted, _ = adopt_into(
                        hypothesis, pending.api_key, pending.requests, body, binding
                    )
                    kept.append(adopted)
                    names.add(name)
        if not kept:
            return False
        self.tracker.keep(pending.ref, kept)
        self._tolerated("/".join(sorted(names)), line, pending)
        return True

    def _tolerable_by(self, unexplained: Unexplained) -> str:
        """The tolerances that would accept this divergence (a hint for the report; none is
        applied unless the profile has it)."""
        pending, candidates, body, observed = unexplained
        api = API_NAMES.get(pending.api_key, str(pending.api_key))
        names: set[str] = set()
        shaped = _kafka_shaped(pending, candidates)
        for hypothesis, expected in shaped:
            guess = _guessed_profile(api, expected, body)
            for name, rewritten in _rewrites(guess, pending.api_key, expected, body):
                comparable_rewritten = comparable(pending.api_key, pending.version, rewritten)
                if next(hypothesis.binding.unify(comparable_rewritten, observed), None):
                    names.add(name)
        if _skips_member_id_round(pending, [e for _, e in shaped], body):
            names.add(NO_MEMBER_ID_REQUIRED)
        return ", ".join(sorted(names))

    def _tolerated(self, name: str, line: int, pending: Pending) -> None:
        api = API_NAMES.get(pending.api_key, str(pending.api_key))
        self.tolerated.append(Tolerated(name, line, api))

    def _report(
        self,
        pending: Pending,
        line: int,
        ts_ms: float,
        reason: str,
        observed: dict[str, Any] | None,
        kind: str,
        field: str,
        allowed: tuple[dict[str, Any], ...] = (),
        state: str = "",
        rule: str = "",
        resync: str = "",
        tolerable_by: str = "",
    ) -> Divergence:
        """Record a divergence about the request `pending`."""
        connection, correlation_id = pending.ref
        divergence = Divergence(
            line,
            ts_ms,
            connection,
            correlation_id,
            API_NAMES.get(pending.api_key, str(pending.api_key)),
            pending.version,
            reason,
            observed,
            allowed,
            state,
            kind,
            field,
            rule,
            resync,
            tolerable_by,
        )
        self.divergences.append(divergence)
        return divergence

    def close(self, connection: str, ts_ms: float) -> None:
        """A client connection closed."""
        self.counts.events += 1
        self.counts.judged += 1
        self._time(ts_ms)
        # Requests left on a closed connection are owed nothing (the client may have given up).
        for ref in [r for r in self._requests if r[0] == connection]:
            del self._requests[ref]
        if self.mid_stream is not None:
            self.mid_stream.drop_connection(connection)
        self.tracker.on_close(connection)

    def _time(self, ts_ms: float) -> int:
        """Milliseconds since the first observation: the specification's clock starts at 0."""
        if self._origin is None:
            self._origin = ts_ms
        self._last = int(ts_ms - self._origin)
        return self._last


def _coordinator_error(body: dict[str, Any]) -> int | None:
    """The response's top-level error code; for a response without one (OffsetCommit,
    DescribeGroups, DeleteGroups), the first error code it carries (a coordinator that moved
    answers every part alike)."""
    code = body.get("error_code")
    if isinstance(code, int):
        return code
    for topic in body.get("topics") or ():
        for part in (topic.get("partitions") or ()) if isinstance(topic, dict) else ():
            nested = part.get("error_code") if isinstance(part, dict) else None
            return nested if isinstance(nested, int) else None
    # DescribeGroups and DeleteGroups answer each group apart.
    for group in body.get("groups") or body.get("results") or ():
        nested = group.get("error_code") if isinstance(group, dict) else None
        return nested if isinstance(nested, int) else None
    return None


def _member_ids(group: Group) -> list[str]:
    """The ids of the group's members and pending members."""
    return [m.member_id for m in group.members] + [p.member_id for p in group.pending_members]


def _with_ids(binding: Binding, member_ids: list[str]) -> Binding:
    """`binding` with each of `member_ids` bound to itself (ids learned mid-stream are the
    specification's own spelling)."""
    for member_id in member_ids:
        binding = binding.with_pair(member_id, member_id)
    return binding


def _rebind(hypothesis: Hypothesis, binding: Binding) -> Hypothesis:
    return hypothesis if binding is hypothesis.binding else replace(hypothesis, binding=binding)


def _group_ids(requests: tuple[rq.Request, ...]) -> frozenset[str]:
    found = set()
    for request in requests:
        group_id = getattr(request, "group_id", None) or getattr(request, "key", None)
        if isinstance(group_id, str):
            found.add(group_id)
        found.update(getattr(request, "group_ids", ()))
    return frozenset(found)


def _rewrites(
    profile: DeviationProfile, api_key: int, expected: dict[str, Any], body: dict[str, Any]
) -> list[tuple[str, dict[str, Any]]]:
    """The specification's response as each tolerance of `profile` would let it differ."""
    found = []
    generation = body.get("generation_id")
    if (
        profile.first_generation
        and api_key == JOIN_GROUP
        and expected.get("error_code") == 0
        and expected.get("generation_id") == 1
        and isinstance(generation, int)
    ):
        found.append((FIRST_GENERATION, {**expected, "generation_id": generation}))
    for error in profile.errors:
        if (
            error.api_key == api_key
            and expected.get("error_code") == error.kafka
            and body.get("error_code") == error.sent
        ):
            found.append((error.name, {**expected, "error_code": error.sent}))
    return found


def _guessed_profile(api: str, expected: dict[str, Any], body: dict[str, Any]) -> DeviationProfile:
    """Every tolerance that could be in play where `body` was sent and `expected` allowed."""
    guess = DeviationProfile(first_generation=True)
    sent, kafka = body.get("error_code"), expected.get("error_code")
    if isinstance(sent, int) and isinstance(kafka, int) and sent != kafka:
        try:
            name = f"{ERROR_PREFIX}{api}:{ErrorCode(sent).name}={ErrorCode(kafka).name}"
        except ValueError:  # a code the specification does not name
            return guess
        guess = guess.with_tolerance(name)
    return guess


def _skips_member_id_round(pending: Pending, expected: list[dict[str, Any]], body: Any) -> bool:
    """Whether the response shows a MEMBER_ID_REQUIRED round skipped where Kafka requires it."""
    request = pending.requests[0] if len(pending.requests) == 1 else None
    return (
        isinstance(request, rq.JoinGroupRequest)
        and request.api_version >= 4
        and request.member_id == ""
        and request.group_instance_id is None
        and all(e.get("error_code") == MEMBER_ID_REQUIRED for e in expected)
        and body.get("error_code") != MEMBER_ID_REQUIRED
    )


def _kafka_shaped(
    pending: Pending, candidates: list[tuple[Hypothesis, tuple[ResponseBody, ...]]]
) -> list[tuple[Hypothesis, dict[str, Any]]]:
    """Each candidate state with its response to `pending` in Kafka's shape."""
    return [
        (h, response_body(bodies, pending.version, pending.requests)) for h, bodies in candidates
    ]
