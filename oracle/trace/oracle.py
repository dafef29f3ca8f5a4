"""The oracle's Python API: observe a coordinator's requests and responses, learn where it departs.

    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0))
    oracle.request("10.0.0.7:53122", 4, JOIN_GROUP, 9, body, ts_ms=now_ms(), client_id="c-1")
    divergence = oracle.response("10.0.0.7:53122", 4, JOIN_GROUP, 9, response_body, ts_ms=now_ms())

An implementation calls it as it serves (in process), or `validate_trace` replays a trace file.
Bodies are Kafka-shaped dicts as in docs/trace-format.md. The first divergence is kept; later
observations are ignored, since what follows depends on a state the specification never had.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.responses import ResponseBody
from groupspec.wire.trace_format import API_NAMES, CLOSE, REQUEST, TraceEvent

from .binding import Binding
from .comparison import comparable
from .divergence_text import render_response, render_state
from .kafka_shape import BodyError, UnmodelledRequest, response_body, spec_requests
from .tracker import Hypothesis, OracleSettings, Pending, Ref, Tracker


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

    def to_json(self) -> dict[str, Any]:
        """The divergence as a JSON object."""
        return {
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


@dataclass
class OracleCounts:
    """What an oracle has seen so far."""

    events: int = 0
    requests: int = 0
    responses_checked: int = 0
    skipped: int = 0
    max_hypotheses: int = 1
    skipped_apis: dict[str, int] = field(default_factory=dict)


class Oracle:
    """Judges one coordinator's group traffic, observation by observation."""

    def __init__(
        self,
        config: CoordinatorConfig | None = None,
        settings: OracleSettings | None = None,
    ) -> None:
        self.tracker = Tracker(config or CoordinatorConfig(), settings or OracleSettings())
        self.counts = OracleCounts()
        self.divergence: Divergence | None = None
        self._origin: float | None = None
        self._skipped: set[Ref] = set()
        self._requests: dict[Ref, Pending] = {}

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
        if self.divergence is not None:
            return
        ref = (connection, correlation_id)
        try:
            requests = spec_requests(api_key, version, body, client_id, connection)
        except UnmodelledRequest:
            self._skipped.add(ref)
            self.counts.skipped += 1
            name = API_NAMES.get(api_key, str(api_key))
            self.counts.skipped_apis[name] = self.counts.skipped_apis.get(name, 0) + 1
            return
        except BodyError as error:
            raise ObservationError(
                f"{API_NAMES.get(api_key, api_key)} v{version} request: {error}"
            ) from None
        self.counts.requests += 1
        pending = Pending(ref, api_key, version, requests, self._time(ts_ms), line)
        self._requests[ref] = pending
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
        """The coordinator answered; returns the divergence if the answer is not allowed."""
        self.counts.events += 1
        if self.divergence is not None:
            return None
        ref = (connection, correlation_id)
        if ref in self._skipped:
            self._skipped.discard(ref)
            return None
        pending = self._requests.pop(ref, None)
        if pending is None:
            raise ObservationError(
                f"a response to {connection}#{correlation_id} with no request before it"
            )
        try:
            observed = comparable(api_key, version, body)
        except BodyError as error:
            raise ObservationError(
                f"{API_NAMES.get(api_key, api_key)} v{version} response: {error}"
            ) from None
        now = self._time(ts_ms)
        candidates = self.tracker.explain_response(ref, now)
        survivors: list[Hypothesis] = []
        allowed: dict[Any, tuple[Binding, tuple[ResponseBody, ...]]] = {}
        for hypothesis, bodies in candidates:
            expected = comparable(
                api_key, version, response_body(bodies, version, pending.requests)
            )
            extended = list(hypothesis.binding.unify(expected, observed))
            if not extended:
                allowed.setdefault(expected, (hypothesis.binding, bodies))
            survivors.extend(_rebind(hypothesis, b) for b in extended)
        self.counts.responses_checked += 1
        if survivors:
            self.tracker.keep(ref, survivors)
            self.counts.max_hypotheses = max(
                self.counts.max_hypotheses, len(self.tracker.hypotheses)
            )
            return None
        if candidates:
            reason = "the response is not one the specification allows here"
            shown = tuple(
                render_response(response_body(bodies, version, pending.requests), binding)
                for binding, bodies in allowed.values()
            )
        else:
            reason = "the specification sends no response to this request by this time"
            shown = ()
        if candidates:
            shown_hypothesis = candidates[0][0]
        else:
            # Nothing answers the request: show the coordinator with everything due done.
            self.tracker.settle(now)
            shown_hypothesis = self.tracker.hypotheses[0]
        group_ids = _group_ids(pending)
        self.divergence = Divergence(
            line,
            ts_ms,
            connection,
            correlation_id,
            API_NAMES.get(api_key, str(api_key)),
            version,
            reason,
            body,
            shown,
            render_state(shown_hypothesis.state, group_ids, shown_hypothesis.binding),
        )
        return self.divergence

    def close(self, connection: str, ts_ms: float) -> None:
        """A client connection closed."""
        self.counts.events += 1
        if self.divergence is None:
            self._time(ts_ms)
            self.tracker.on_close(connection)

    def _time(self, ts_ms: float) -> int:
        """Milliseconds since the first observation: the specification's clock starts at 0."""
        if self._origin is None:
            self._origin = ts_ms
        return int(ts_ms - self._origin)


def _rebind(hypothesis: Hypothesis, binding: Binding) -> Hypothesis:
    return hypothesis if binding is hypothesis.binding else replace(hypothesis, binding=binding)


def _group_ids(pending: Pending) -> frozenset[str]:
    found = set()
    for request in pending.requests:
        group_id = getattr(request, "group_id", None) or getattr(request, "key", None)
        if isinstance(group_id, str):
            found.add(group_id)
        found.update(getattr(request, "group_ids", ()))
    return frozenset(found)
