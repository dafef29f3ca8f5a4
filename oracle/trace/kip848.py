"""The consumer-protocol oracle: judges a broker's ConsumerGroupHeartbeat and ConsumerGroupDescribe
traffic against the KIP-848 specification (`spec/kip848`), as `oracle.Oracle` judges the classic
APIs against `spec/`.

Each exchange is replayed through `ConsumerGroupCoordinatorSpec.step` when its response is seen,
at the time its request was seen. Kafka answers a group's writes once they are committed to the
group's `__consumer_offsets` partition, and two committed in one batch may reach the wire in
either order (different network threads send them): so a response is also judged in the
hypotheses where heartbeats of its group still in flight took effect first, their answers kept
until their own responses arrive (oracle/trace/kip848_order.py, bounded by the classic oracle's
`reorder_window_ms`). Where the specification allows several outcomes (the server-side assignor's target, a tie
between preferred assignors) the oracle keeps one hypothesis per outcome and drops those the
observed responses rule out. Member ids the coordinator generates (v0 joins) are bound to the
observed ones as they appear; v1 ids are the client's own and pass through unchanged.

Timers are state in the specification (`spec/kip848/timers.py`): before each request, a
session or rebalance timeout whose deadline is more than `late_ms` behind the request's time
has fired; one within `early_ms` ahead to `late_ms` behind may have fired or not (the broker's
clock and its timer thread are not the recorder's), so both are kept.

What is not judged here, and why:
- a heartbeat subscribing by regular expression (`subscribed_topic_regex`): the specification
  does not model regular-expression subscriptions (docs/protocol.md §12.13); counted as skipped;
- ConsumerGroupDescribe's client id and client host and each topic's name: the specification
  keeps neither (`spec/kip848/state.py`), so they are left out of the comparison;
- an OffsetCommit or OffsetFetch naming a topic by an id the trace header does not give
  (oracle/trace/kip848_offsets.py), or an OffsetFetch batching several groups.

Classic members inside consumer groups: JoinGroup, SyncGroup, Heartbeat and LeaveGroup naming a
group this oracle has seen a ConsumerGroupHeartbeat of are its own too, judged through
`spec/kip848/mixed.py` (oracle/trace/kip848_classic.py), so that a classic consumer joining a
consumer group and the downgrade of a group whose last consumer-protocol member leaves are judged
with the group. A group that has become a classic one here (a downgrade, or a classic join
replacing an Empty consumer group) is judged no further: a classic group's JoinGroup is answered
when its rebalance completes, which the classic oracle's tracker follows and this oracle does not;
its later requests are counted as skipped.

OffsetCommit and OffsetFetch are classic API keys: those naming a group this oracle has seen a
ConsumerGroupHeartbeat of are its own, judged by member id and member epoch against
spec/kip848/offsets.py (the version profiles decide the commit's epoch check); the classic oracle
judges the rest. A DeleteGroups naming only such groups is judged here too (spec/kip848/groups.py),
and so is a ListGroups asking for consumer groups only (types filter "consumer"), its answer
read for the groups this trace's heartbeats named (a broker lists every client's groups); any
other ListGroups, which may list classic groups, stays with the classic oracle.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.errors import UnknownApiError
from groupspec.spec.events import EventNotEnabledError
from groupspec.spec.kip848.config import ConsumerGroupConfig, TopicMetadata
from groupspec.spec.kip848.events import RequestArrived
from groupspec.spec.kip848.groups import CONSUMER_GROUP_TYPE
from groupspec.spec.kip848.mixed import MixedCoordinatorSpec
from groupspec.spec.kip848.mixed_state import GroupKind, MixedState
from groupspec.spec.kip848.timers import armed_timers
from groupspec.vocabulary import consumer_groups as cg
from groupspec.vocabulary.errors import InvalidConfigError
from groupspec.vocabulary.requests import (
    OffsetCommitRequest,
    OffsetFetchRequest,
    Received,
    RequestRef,
)
from groupspec.wire.group_apis import (
    CONSUMER_BY_KEY,
    CONSUMER_GROUP_DESCRIBE,
    CONSUMER_GROUP_HEARTBEAT,
    DELETE_GROUPS,
    LIST_GROUPS,
    BodyError,
    UnmodelledRequest,
    client_host_of,
    read_consumer_requests,
    read_requests,
    response_body,
)
from groupspec.wire.trace_format import REQUEST, RESPONSE, TraceEvent

from .kip848_classic import (
    CLASSIC_MEMBER_APIS,
    ClassicMemberRequest,
    bindings,
    classic_group_of,
    in_spec_ids,
)
from .kip848_offsets import (
    OFFSET_APIS,
    judged_version,
    offset_form,
    offset_groups,
    read_offset_request,
)
from .kip848_order import (
    AHEAD_DEPTH,
    InFlight,
    frozen_body,
    groups_of,
    may_precede,
    orders,
    thawed_body,
)
from .oracle import NOT_ALLOWED, UNDECODABLE, Divergence, ObservationError, OracleCounts
from .tracker import OracleSettings

# How far the broker's timers may run from the recorder's clock: a timer may fire up to
# EARLY_MS before its deadline as the recorder sees it (the broker's own reading of the request
# time is later than the recorder's, never earlier, so little), and must have fired LATE_MS
# after it (the coordinator runs expired timers through its event queue).
EARLY_MS = 200
LATE_MS = 2_000
# The most hypotheses kept; past it the oracle keeps the first ones (see `_keep`).
MAX_HYPOTHESES = 256


class ConsumerSettingsError(Exception):
    """Consumer-protocol settings in a trace header that do not make a ConsumerGroupConfig."""


def consumer_group_config(settings: dict[str, Any]) -> ConsumerGroupConfig:
    """The consumer-protocol settings of a trace header (`TraceHeader.consumer_groups`) as the
    specification's config; Kafka's defaults for what they omit."""
    values = dict(settings)
    topics = values.pop("topics", None)
    if "assignors" in values:
        values["assignors"] = tuple(values["assignors"])
    try:
        if topics is not None:
            values["topics"] = tuple(
                TopicMetadata(str(t["name"]), str(t["topic_id"]), int(t["partitions"]))
                for t in topics
            )
        return ConsumerGroupConfig(**values)
    except (InvalidConfigError, TypeError, KeyError) as error:
        raise ConsumerSettingsError(f"consumer_groups settings: {error}") from None


@dataclass(frozen=True)
class Hypothesis:
    """One specification state the observations allow so far, how the specification's member
    ids are spelled in the trace, and the rules fired on the way here."""

    state: MixedState
    spelling: tuple[tuple[str, str], ...] = ()
    fired: frozenset[str] = frozenset()
    # Requests that took effect before one judged earlier, with the specification's answer
    # (`kip848_order.frozen_body`), until their responses are seen (oracle/trace/kip848_order.py).
    ahead: tuple[tuple[tuple[str, int], str], ...] = ()

    def answered_ahead(self, ref: tuple[str, int]) -> str | None:
        """The answer kept for `ref` if it took effect ahead of its response's turn, else None."""
        return dict(self.ahead).get(ref)

    def observed_id(self, spec_id: str) -> str | None:
        """How the trace spells `spec_id`, or None when not bound yet."""
        return dict(self.spelling).get(spec_id)

    def spec_id(self, observed_id: str) -> str:
        """The specification's member id for an id seen in the trace (itself when unbound)."""
        for spec_id, observed in self.spelling:
            if observed == observed_id:
                return spec_id
        return observed_id

    def bound(self, spec_id: str, observed_id: str) -> Hypothesis | None:
        """This hypothesis with `spec_id` spelled `observed_id`, or None if that contradicts a
        binding it holds."""
        current = self.observed_id(spec_id)
        if current is not None:
            return self if current == observed_id else None
        if spec_id == observed_id and all(o != observed_id for _, o in self.spelling):
            return self
        if any(o == observed_id for _, o in self.spelling):
            return None
        return replace(self, spelling=tuple(sorted((*self.spelling, (spec_id, observed_id)))))


@dataclass
class _Pending:
    request: Any
    # The version the response is built and compared at (an offset API's v10 as v9,
    # kip848_offsets.judged_version), and the one on the wire.
    version: int
    ts_ms: float
    line: int
    wire_version: int


@dataclass
class ConsumerProtocolOracle:
    """Judges the KIP-848 group APIs of one coordinator's trace, event by event."""

    config: ConsumerGroupConfig = field(default_factory=ConsumerGroupConfig)
    early_ms: int = EARLY_MS
    late_ms: int = LATE_MS
    # How long after it was seen a request may take effect (the classic oracle's setting): bounds
    # which requests in flight may have taken effect before the one judged (kip848_order.py).
    reorder_window_ms: int = OracleSettings.reorder_window_ms
    # The classic settings (a classic member's session timeout bounds, the classic group a
    # downgrade makes): the trace's, as the classic oracle reads them.
    classic_config: CoordinatorConfig | None = None

    def __post_init__(self) -> None:
        self.spec = MixedCoordinatorSpec(self.config, self.classic_config)
        self.hypotheses: list[Hypothesis] = [Hypothesis(self.spec.initial_state())]
        self.counts = OracleCounts()
        self.divergences: list[Divergence] = []
        self.ambiguous = False
        self._pending: dict[tuple[str, int], _Pending] = {}
        self._skipped: set[tuple[str, int]] = set()
        # The consumer-protocol groups seen, and the offset requests of theirs in flight.
        self._groups: set[str] = set()
        self._offsets: set[tuple[str, int]] = set()
        # Groups that became classic ones here, judged no further (see the module's docstring).
        self._unjudged: set[str] = set()
        self._now = 0

    def judges(self, event: TraceEvent) -> bool:
        """Whether the event is this oracle's: a KIP-848 API, an OffsetCommit/OffsetFetch naming
        a consumer-protocol group, a DeleteGroups naming only such groups, or a ListGroups of
        consumer groups only (and its response)."""
        if event.api_key in CONSUMER_BY_KEY:
            return True
        ref = (event.connection, event.correlation_id)
        if event.direction == RESPONSE:
            return ref in self._offsets
        if event.direction == REQUEST and event.api_key == LIST_GROUPS:
            # A ListGroups of consumer groups only (types filter "consumer"): no classic group
            # can be in its answer, so it is this oracle's (in flight in `_offsets` too).
            types = (event.body or {}).get("types_filter") or ()
            if [str(t).lower() for t in types] == [CONSUMER_GROUP_TYPE]:
                self._offsets.add(ref)
                return True
            return False
        if event.direction == REQUEST and event.api_key in CLASSIC_MEMBER_APIS:
            # A classic member's request to a consumer group (or one converted from it here).
            if classic_group_of(event.api_key, event.body or {}) in self._groups:
                self._offsets.add(ref)
                return True
            return False
        if event.direction == REQUEST and event.api_key == DELETE_GROUPS:
            # A DeleteGroups naming only consumer-protocol groups is this oracle's too (it is in
            # flight in `_offsets` with the offset requests); one naming others is the classic's.
            named = set((event.body or {}).get("groups_names") or ())
            if named and named <= self._groups:
                self._offsets.add(ref)
                return True
            return False
        if event.direction != REQUEST or event.api_key not in OFFSET_APIS:
            return False
        if offset_groups(event.body or {}) & self._groups:
            self._offsets.add(ref)
            return True
        return False

    @property
    def rules_exercised(self) -> frozenset[str]:
        """The specification rules every hypothesis still held fired on its way here."""
        fired = [hypothesis.fired for hypothesis in self.hypotheses]
        return frozenset.intersection(*fired) if fired else frozenset()

    def observe(self, event: TraceEvent, line: int = 0) -> Divergence | None:
        """Take one KIP-848 event; the divergence if the coordinator departs here."""
        ref = (event.connection, event.correlation_id)
        self.counts.events += 1
        if event.direction == RESPONSE:
            self._offsets.discard(ref)
        if event.direction == REQUEST:
            self._request(ref, event, line)
            return None
        if event.direction != RESPONSE:
            return None
        if ref in self._skipped:
            self._skipped.discard(ref)
            return None
        pending = self._pending.pop(ref, None)
        if pending is None:
            raise ObservationError(
                f"{event.api} response (correlation id {event.correlation_id}) answers no "
                f"request seen on {event.connection}"
            )
        self.counts.judged += 1
        if event.body is None:
            return self._diverge(
                event, line, UNDECODABLE, f"undecodable response: {event.undecodable}", (), ""
            )
        return self._response(event, pending, line)

    # -- requests --------------------------------------------------------------------------

    def _request(self, ref: tuple[str, int], event: TraceEvent, line: int) -> None:
        try:
            requests = self._read(event)
        except UnmodelledRequest as unmodelled:
            self._skip(
                ref, f"{event.api} ({unmodelled})" if event.api_key in OFFSET_APIS else event.api
            )
            return
        except BodyError as error:
            raise ObservationError(f"{event.api} v{event.api_version} request: {error}") from None
        if len(requests) != 1:
            self._skip(ref, f"{event.api} of several groups")
            return
        (request,) = requests
        if getattr(request, "group_id", None) in self._unjudged:
            self._skip(ref, f"{event.api} (a group converted to classic)")
            return
        if isinstance(request, cg.ConsumerGroupHeartbeatRequest) and request.subscribed_topic_regex:
            self._skip(ref, f"{event.api} (regular-expression subscription)")
            return
        if isinstance(request, cg.ConsumerGroupHeartbeatRequest):
            self._groups.add(request.group_id)
        self.counts.requests += 1
        self.counts.judged += 1
        version = event.api_version
        if event.api_key in OFFSET_APIS:
            version = judged_version(version)
        self._pending[ref] = _Pending(request, version, event.ts_ms, line, event.api_version)

    def _read(self, event: TraceEvent) -> tuple[Any, ...]:
        host = client_host_of(event.connection)
        body = event.body or {}
        if event.api_key in OFFSET_APIS:
            return read_offset_request(
                event.api_key, event.api_version, body, event.client_id, host, self.config.topics
            )
        if event.api_key in (DELETE_GROUPS, LIST_GROUPS) or event.api_key in CLASSIC_MEMBER_APIS:
            return read_requests(event.api_key, event.api_version, body, event.client_id, host)
        return read_consumer_requests(event.api_key, event.api_version, body, event.client_id, host)

    def _skip(self, ref: tuple[str, int], name: str) -> None:
        self._skipped.add(ref)
        self.counts.skipped += 1
        self.counts.skipped_apis[name] = self.counts.skipped_apis.get(name, 0) + 1

    # -- responses -------------------------------------------------------------------------

    def _response(self, event: TraceEvent, pending: _Pending, line: int) -> Divergence | None:
        self.counts.responses_checked += 1
        self._now = max(self._now, int(pending.ts_ms))
        observed = event.body or {}
        if event.api_key == LIST_GROUPS:
            # The broker lists the groups of every client; those no heartbeat here named are
            # outside the trace and left out, as the classic oracle leaves out foreign groups.
            listed = [g for g in observed.get("groups") or () if g.get("group_id") in self._groups]
            observed = {**observed, "groups": listed}
        # An offset API's response is compared by its form, topics by name.
        offsets = event.api_key in OFFSET_APIS
        seen_form = (
            offset_form(event.api_key, pending.wire_version, observed, self.config.topics)
            if offsets
            else None
        )
        ref = RequestRef(event.connection, event.correlation_id)
        kept: list[Hypothesis] = []
        allowed: list[dict[str, Any]] = []
        every: list[Hypothesis] = []
        parked: list[Hypothesis] = []
        key = (event.connection, event.correlation_id)
        for hypothesis in self._in_some_order(key, pending):
            kept_ahead = hypothesis.answered_ahead(key)
            if kept_ahead is not None:
                # It took effect before a request judged earlier, which computed its answer.
                after = replace(hypothesis, ahead=tuple(a for a in hypothesis.ahead if a[0] != key))
                body = thawed_body(kept_ahead)
                every.append(after)
                matching = _matches(event.api_key, pending.version, body, observed, after)
                kept += matching
                if not matching and len(allowed) < 4 and body not in allowed:
                    allowed.append(body)
                continue
            request = _in_spec_ids(pending.request, hypothesis)
            try:
                outcomes = self.spec.step(hypothesis.state, _arrival(ref, request), self._now)
            except UnknownApiError:
                # An input the specification does not model (docs/protocol.md §12.13): the
                # request and its response are skipped, not judged.
                self._unjudged_exchange(event, pending, "unmodelled")
                return None
            for outcome in outcomes:
                replies = [r for r in outcome.responses if r.ref == ref]
                if not replies:
                    # Parked: a classic group's JoinGroup waiting for its rebalance.
                    parked.append(replace(hypothesis, state=outcome.state))
                    continue
                body = response_body((replies[0].body,), pending.version, (pending.request,))
                after = replace(
                    hypothesis, state=outcome.state, fired=hypothesis.fired | set(outcome.rules)
                )
                every.append(after)
                if offsets:
                    same = offset_form(event.api_key, pending.version, body, ()) == seen_form
                    matching = [after] if same else []
                else:
                    matching = _matches(event.api_key, pending.version, body, observed, after)
                kept += matching
                if not matching and len(allowed) < 4 and body not in allowed:
                    allowed.append(body)
        if parked and not every:
            self.hypotheses = self._keep(parked)
            self._unjudged_exchange(event, pending, "answered after a classic rebalance")
            return None
        if kept:
            self.hypotheses = self._keep(kept)
            self._note_conversions(pending.request)
            return None
        # Resynchronise: go on from every state the specification allowed here.
        self.hypotheses = self._keep(every) or self.hypotheses
        self._note_conversions(pending.request)
        return self._diverge(
            event,
            line,
            NOT_ALLOWED,
            _reason(event.api_key, pending.version, allowed, observed),
            tuple(allowed),
            _first_field(event.api_key, pending.version, allowed, observed),
        )

    def _unjudged_exchange(self, event: TraceEvent, pending: _Pending, why: str) -> None:
        """Count the exchange as skipped, not judged; a classic member's request skipped leaves
        its group unjudged from here on (the hypotheses no longer hold what the broker did)."""
        self.counts.judged -= 2
        self.counts.requests -= 1
        self.counts.responses_checked -= 1
        self.counts.skipped += 1
        name = f"{event.api} ({why})"
        self.counts.skipped_apis[name] = self.counts.skipped_apis.get(name, 0) + 1
        if event.api_key in CLASSIC_MEMBER_APIS:
            self._unjudged.add(pending.request.group_id)

    def _note_conversions(self, request: Any) -> None:
        """Leave unjudged from here on each group `request` names that every hypothesis now
        holds as a classic group (see the module's docstring)."""
        for group_id in groups_of(request) or ():
            if all(h.state.kind_of(group_id) is GroupKind.CLASSIC for h in self.hypotheses):
                self._unjudged.add(group_id)

    def _timed(self, hypotheses: Iterable[Hypothesis], now: int) -> list[Hypothesis]:
        """The hypotheses at `now`: timers more than `late_ms` overdue fired, those near their
        deadline fired or not."""
        done: list[Hypothesis] = []
        frontier = list(hypotheses)
        while frontier:
            hypothesis = frontier.pop()
            timers: list[tuple[Any, int]] = [
                *armed_timers(hypothesis.state.consumer),
                *self.spec.armed_classic_member_timers(hypothesis.state),
            ]
            due = sorted(
                (deadline, index, timer)
                for index, (timer, deadline) in enumerate(timers)
                if deadline <= now + self.early_ms
            )
            if not due:
                done.append(hypothesis)
                continue
            deadline, _, timer = due[0]
            frontier.extend(self._fire(hypothesis, timer, deadline))
            if deadline > now - self.late_ms:
                # It may not have fired yet, and then neither has any timer due after it: keep
                # the state where none has.
                done.append(hypothesis)
        return self._keep(done)

    def _fire(self, hypothesis: Hypothesis, timer: Any, deadline: int) -> list[Hypothesis]:
        try:
            outcomes = self.spec.step(hypothesis.state, timer, max(deadline, 0))
        except EventNotEnabledError:
            return []
        return [
            replace(hypothesis, state=o.state, fired=hypothesis.fired | set(o.rules))
            for o in outcomes
        ]

    def _keep(self, hypotheses: list[Hypothesis]) -> list[Hypothesis]:
        unique = list(dict.fromkeys(hypotheses))
        self.counts.max_hypotheses = max(self.counts.max_hypotheses, len(unique))
        if len(unique) > MAX_HYPOTHESES:
            self.ambiguous = True
            unique = unique[:MAX_HYPOTHESES]
        return unique

    def _diverge(
        self,
        event: TraceEvent,
        line: int,
        kind: str,
        reason: str,
        allowed: tuple[dict[str, Any], ...],
        field_name: str,
    ) -> Divergence:
        divergence = Divergence(
            line=line,
            ts_ms=event.ts_ms,
            connection=event.connection,
            correlation_id=event.correlation_id,
            api=event.api,
            version=event.api_version,
            reason=reason,
            observed=event.body,
            allowed=allowed,
            state=_render(self.hypotheses),
            kind=kind,
            field=field_name,
        )
        self.divergences.append(divergence)
        return divergence

    def finish(self) -> None:
        """The end of the trace: requests never answered are left as they are (a heartbeat in
        flight when the recording stopped)."""
        self._pending.clear()

    # -- response order (oracle/trace/kip848_order.py) --------------------------------------

    def _in_some_order(self, ref: tuple[str, int], pending: _Pending) -> list[Hypothesis]:
        """The hypotheses at the judged request's time, and those in which heartbeats of its
        group still in flight took effect before it (their answers kept in `ahead`)."""
        judged = InFlight(ref, pending.ts_ms, groups_of(pending.request))
        candidates = [
            other
            for other, waiting in self._pending.items()
            if isinstance(waiting.request, cg.ConsumerGroupHeartbeatRequest)
            and may_precede(
                judged,
                InFlight(other, waiting.ts_ms, groups_of(waiting.request)),
                self.reorder_window_ms,
            )
        ]
        timed = self._timed(self.hypotheses, self._now)
        if not candidates:
            return timed
        # The hypotheses in processing order first, so that a cut (`_keep`) drops reorderings.
        reordered: list[Hypothesis] = []
        for hypothesis in timed:
            if hypothesis.answered_ahead(ref) is None:
                reordered += orders(
                    hypothesis, candidates, self._take_ahead, MAX_HYPOTHESES, AHEAD_DEPTH
                )[1:]
        return self._keep(timed + reordered)

    def _take_ahead(self, hypothesis: Hypothesis, ref: tuple[str, int]) -> list[Hypothesis]:
        """`hypothesis` after the in-flight request `ref` took effect, its answer kept."""
        if hypothesis.answered_ahead(ref) is not None:
            return []
        waiting = self._pending[ref]
        request = _in_spec_ids(waiting.request, hypothesis)
        # At the time it would be stepped at had its response come first, so that requests
        # that commute give the same state in either order, and their hypotheses merge.
        at = max(self._now, int(waiting.ts_ms))
        try:
            outcomes = self.spec.step(hypothesis.state, _arrival(RequestRef(*ref), request), at)
        except (UnknownApiError, EventNotEnabledError):
            return []
        taken: list[Hypothesis] = []
        for outcome in outcomes:
            (reply,) = [r for r in outcome.responses if r.ref == RequestRef(*ref)]
            body = response_body((reply.body,), waiting.version, (waiting.request,))
            taken.append(
                replace(
                    hypothesis,
                    state=outcome.state,
                    fired=hypothesis.fired | set(outcome.rules),
                    # Sorted: the same answers kept ahead in another order are one hypothesis.
                    ahead=tuple(sorted((*hypothesis.ahead, (ref, frozen_body(body))))),
                )
            )
        return taken


# -- comparing ---------------------------------------------------------------------------------


def _in_spec_ids(request: Any, hypothesis: Hypothesis) -> Any:
    if isinstance(request, cg.ConsumerGroupHeartbeatRequest) and request.member_id:
        return replace(request, member_id=hypothesis.spec_id(request.member_id))
    if isinstance(request, ClassicMemberRequest):
        return in_spec_ids(request, hypothesis.spec_id)
    if isinstance(request, OffsetCommitRequest | OffsetFetchRequest) and request.member_id:
        # A classic member commits and fetches by the id the coordinator handed it.
        return replace(request, member_id=hypothesis.spec_id(request.member_id))
    return request


def _arrival(ref: RequestRef, request: Any) -> Any:
    """The specification's input for `request` arriving: the classic coordinator's for a
    classic member's request, the consumer-protocol coordinator's otherwise."""
    if isinstance(request, ClassicMemberRequest):
        return Received(ref, request)
    return RequestArrived(ref, request)


def _partitions(entries: Any) -> frozenset[tuple[str, int]]:
    return frozenset(
        (str(entry["topic_id"]), int(p)) for entry in entries or () for p in entry["partitions"]
    )


def _heartbeat_form(body: dict[str, Any]) -> tuple[Any, ...]:
    assignment = body.get("assignment")
    return (
        body.get("error_code"),
        body.get("member_epoch"),
        body.get("heartbeat_interval_ms"),
        None if assignment is None else _partitions(assignment.get("topic_partitions")),
    )


def _member_form(member: dict[str, Any], version: int) -> tuple[Any, ...]:
    return (
        member.get("instance_id"),
        member.get("rack_id"),
        member.get("member_epoch"),
        tuple(sorted(member.get("subscribed_topic_names") or ())),
        member.get("subscribed_topic_regex"),
        _partitions(member["assignment"]["topic_partitions"]),
        _partitions(member["target_assignment"]["topic_partitions"]),
        member.get("member_type") if version >= 1 else None,
    )


def _group_form(group: dict[str, Any]) -> tuple[Any, ...]:
    return (
        group.get("error_code"),
        group.get("group_state"),
        group.get("group_epoch"),
        group.get("assignment_epoch"),
        group.get("assignor_name"),
    )


def _matches(
    api_key: int,
    version: int,
    spec_body: dict[str, Any],
    observed: dict[str, Any],
    hypothesis: Hypothesis,
) -> list[Hypothesis]:
    """`hypothesis` with the member ids of this response bound, in every way under which the
    observed response is the specification's `spec_body`; none if it is not."""
    if api_key in CLASSIC_MEMBER_APIS:
        return [
            replace(hypothesis, spelling=spelling)
            for spelling in bindings(api_key, version, spec_body, observed, hypothesis.spelling)
        ]
    matched = _matched_one(api_key, version, spec_body, observed, hypothesis)
    return [] if matched is None else [matched]


def _matched_one(
    api_key: int,
    version: int,
    spec_body: dict[str, Any],
    observed: dict[str, Any],
    hypothesis: Hypothesis,
) -> Hypothesis | None:
    if api_key == CONSUMER_GROUP_HEARTBEAT:
        if _heartbeat_form(spec_body) != _heartbeat_form(observed):
            return None
        spec_id, seen_id = spec_body.get("member_id"), observed.get("member_id")
        if spec_id is None or seen_id is None:
            return hypothesis if spec_id == seen_id else None
        return hypothesis.bound(spec_id, seen_id)
    if api_key == CONSUMER_GROUP_DESCRIBE:
        spec_groups = {g["group_id"]: g for g in spec_body.get("groups", [])}
        seen_groups = {g["group_id"]: g for g in observed.get("groups", [])}
        if spec_groups.keys() != seen_groups.keys():
            return None
        for group_id, spec_group in spec_groups.items():
            seen = seen_groups[group_id]
            if _group_form(spec_group) != _group_form(seen):
                return None
            spec_members = {
                (hypothesis.observed_id(m["member_id"]) or m["member_id"]): _member_form(m, version)
                for m in spec_group.get("members", [])
            }
            seen_members = {
                m["member_id"]: _member_form(m, version) for m in seen.get("members", [])
            }
            if spec_members != seen_members:
                return None
        return hypothesis
    if api_key == DELETE_GROUPS:
        return hypothesis if _deleted_form(spec_body) == _deleted_form(observed) else None
    if api_key == LIST_GROUPS:
        return hypothesis if _listed_form(spec_body) == _listed_form(observed) else None
    return None


def _listed_form(body: dict[str, Any]) -> tuple[Any, ...]:
    """A ListGroups response as its error code and the set of groups listed."""
    groups = frozenset(
        (g["group_id"], g.get("protocol_type"), g.get("group_state"), g.get("group_type"))
        for g in body.get("groups") or ()
    )
    return (body.get("error_code"), groups)


def _deleted_form(body: dict[str, Any]) -> dict[str, Any]:
    """A DeleteGroups response as each group's error code."""
    return {r["group_id"]: r["error_code"] for r in body.get("results") or ()}


def _reason(
    api_key: int, version: int, allowed: list[dict[str, Any]], observed: dict[str, Any]
) -> str:
    if not allowed:
        return "no state the specification allows answers this request"
    field_name = _first_field(api_key, version, allowed, observed)
    return (
        f"the specification allows {len(allowed)} other answer(s); first difference: {field_name}"
    )


def _first_field(
    api_key: int, version: int, allowed: list[dict[str, Any]], observed: dict[str, Any]
) -> str:
    if not allowed:
        return ""
    expected = allowed[0]
    if api_key == CONSUMER_GROUP_HEARTBEAT:
        names = ("error_code", "member_epoch", "heartbeat_interval_ms", "assignment")
        for name, a, b in zip(
            names, _heartbeat_form(expected), _heartbeat_form(observed), strict=True
        ):
            if a != b:
                return name
        return "member_id"
    if api_key in CLASSIC_MEMBER_APIS:
        differing = [
            k for k in expected if k != "throttle_time_ms" and expected[k] != observed.get(k)
        ]
        return differing[0] if differing else "member_id"
    if api_key in OFFSET_APIS:
        # Compared as a whole form (kip848_offsets.offset_form): the group's error or a partition.
        return "partitions"
    return "groups"


def _render(hypotheses: list[Hypothesis]) -> str:
    if not hypotheses:
        return ""
    state = hypotheses[0].state.consumer
    lines = []
    for group in state.iter_groups():
        lines.append(
            f"group {group.group_id}: {group.state.value}, epoch {group.group_epoch}, "
            f"assignment epoch {group.assignment_epoch}"
        )
        for member in group.iter_members():
            lines.append(
                f"  {member.member_id} epoch {member.member_epoch} {member.state.value} "
                f"assigned {sorted((tp.topic, tp.partition) for tp in member.assigned)} "
                f"revoking {sorted((tp.topic, tp.partition) for tp in member.pending_revocation)}"
            )
    if len(hypotheses) > 1:
        lines.append(f"(and {len(hypotheses) - 1} other hypotheses)")
    return "\n".join(lines)
