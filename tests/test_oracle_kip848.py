"""The consumer-protocol oracle (oracle/trace/kip848.py) on traces written here.

A coordinator run is written as a trace: each request stepped through the KIP-848
specification (its first outcome, at the request's time, timers fired where the run says), the
request and the specification's answer written as Kafka-shaped events. Such a trace must PASS
with every event judged; a changed field, a member id the coordinator spells its own way, a
timer that fired where the specification's deadline says, and a response the specification
does not allow are then checked one by one.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from groupspec.oracle.trace.kip848 import ConsumerProtocolOracle, consumer_group_config
from groupspec.oracle.trace.validate import validate_trace
from groupspec.spec.kip848.coordinator import ConsumerGroupCoordinatorSpec
from groupspec.spec.kip848.events import RequestArrived, SessionTimeoutExpired
from groupspec.spec.kip848.state import ConsumerGroupsState
from groupspec.vocabulary import consumer_groups as cg
from groupspec.vocabulary.requests import RequestRef
from groupspec.wire.group_apis import request_body, response_body
from groupspec.wire.trace_format import REQUEST, RESPONSE, TraceEvent, TraceHeader, TraceWriter

TOPIC_ID = "6a1c0b4e-2f0d-4c4b-9a55-0f3e2d1c0b0a"
SETTINGS: dict[str, Any] = {
    "session_timeout_ms": 10_000,
    "heartbeat_interval_ms": 1_000,
    "assignment_interval_ms": 0,
    "topics": [{"name": "orders", "topic_id": TOPIC_ID, "partitions": 4}],
}
T0 = 1_700_000_000_000


@dataclass
class Run:
    """A coordinator run written as a trace, answered by the specification."""

    spec: ConsumerGroupCoordinatorSpec = field(
        default_factory=lambda: ConsumerGroupCoordinatorSpec(consumer_group_config(SETTINGS))
    )
    state: ConsumerGroupsState = field(default_factory=ConsumerGroupsState)
    events: list[TraceEvent] = field(default_factory=list)
    correlation: int = 0

    def send(self, ts: int, conn: str, request: Any) -> dict[str, Any]:
        self.correlation += 1
        ref = RequestRef(conn, self.correlation)
        key, body = request_body(request)
        outcome = self.spec.step(self.state, RequestArrived(ref, request), T0 + ts)[0]
        self.state = outcome.state
        (reply,) = outcome.responses
        answer = response_body((reply.body,), request.api_version)
        version = request.api_version
        self.events.append(
            TraceEvent(T0 + ts, conn, REQUEST, key, version, self.correlation, "c", body)
        )
        self.events.append(
            TraceEvent(T0 + ts + 1, conn, RESPONSE, key, version, self.correlation, body=answer)
        )
        return answer

    def expire(self, ts: int, member_id: str) -> None:
        event = SessionTimeoutExpired("g", member_id)
        self.state = self.spec.step(self.state, event, T0 + ts)[0].state

    def write(self, path: Path) -> Path:
        out = io.StringIO()
        writer = TraceWriter(out, TraceHeader("test", consumer_groups=SETTINGS))
        for event in self.events:
            writer.write(event)
        path.write_text(out.getvalue())
        return path


def join(member_id: str, version: int = 1) -> cg.ConsumerGroupHeartbeatRequest:
    return cg.ConsumerGroupHeartbeatRequest(
        "g",
        member_id,
        0,
        rebalance_timeout_ms=30_000,
        subscribed_topic_names=("orders",),
        server_assignor="uniform",
        topic_partitions=(),
        api_version=version,
    )


def beat(member_id: str, epoch: int, owned: dict[str, Any] | None, version: int = 1):
    parts = None
    if owned is not None:
        assigned = owned["assignment"]
        entries = assigned["topic_partitions"] if assigned else []
        parts = tuple(
            cg.ConsumerGroupTopicPartitions(e["topic_id"], tuple(e["partitions"])) for e in entries
        )
    return cg.ConsumerGroupHeartbeatRequest(
        "g", member_id, epoch, topic_partitions=parts, api_version=version
    )


def two_members(run: Run, version: int = 1) -> None:
    a = run.send(0, "c1:1", join("" if version == 0 else "A", version))
    a_id = a["member_id"]
    b = run.send(100, "c2:1", join("" if version == 0 else "B", version))
    b_id = b["member_id"]
    # A learns of the new epoch, revokes, then both settle.
    a = run.send(1_000, "c1:1", beat(a_id, a["member_epoch"], None, version))
    a = run.send(1_100, "c1:1", beat(a_id, a["member_epoch"], a, version))
    b = run.send(1_200, "c2:1", beat(b_id, b["member_epoch"], None, version))
    run.send(1_300, "c1:1", beat(a_id, a["member_epoch"], None, version))
    run.send(1_400, "c3:1", cg.ConsumerGroupDescribeRequest(("g", "missing")))


def test_a_trace_the_specification_wrote_passes_with_every_event_judged(tmp_path):
    run = Run()
    two_members(run)
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert verdict.passed, verdict.divergence
    assert verdict.counts.events == len(run.events) == 14
    assert verdict.judged_fraction == 1.0
    assert {
        "cg_heartbeat.join_client_member_id",
        "cg_describe.group",
        "cg_describe.unknown_group",
    } <= verdict.rules


def test_a_changed_epoch_is_a_divergence_at_its_line(tmp_path):
    run = Run()
    two_members(run)
    response = run.events[5]
    body = dict(response.body or {}, member_epoch=(response.body or {})["member_epoch"] + 1)
    run.events[5] = replace(response, body=body)
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert not verdict.passed
    first = verdict.divergence
    assert first is not None
    assert (first.line, first.api, first.field) == (7, "ConsumerGroupHeartbeat", "member_epoch")


def test_v0_member_ids_the_coordinator_generates_are_bound_to_the_observed_ones(tmp_path):
    run = Run()
    two_members(run, version=0)
    spelled = {"member-0": "Zq0-uuid-a", "member-1": "Zq0-uuid-b"}
    text = json.dumps([e.to_json() for e in run.events])
    for spec_id, seen in spelled.items():
        text = text.replace(f'"{spec_id}"', f'"{seen}"')
    run.events = [
        TraceEvent(
            d["ts"],
            d["conn"],
            d["dir"],
            d["key"],
            d["ver"],
            d["corr"],
            d.get("client_id"),
            d["body"],
        )
        for d in json.loads(text)
    ]
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert verdict.passed, verdict.divergence
    # One coordinator id cannot be spelled two ways: B answered with A's observed id diverges.
    b_join = run.events[3]
    run.events[3] = replace(b_join, body=dict(b_join.body or {}, member_id="Zq0-uuid-a"))
    assert not validate_trace(run.write(tmp_path / "u.jsonl"), shrink=False).passed


def test_a_session_timeout_fires_from_the_trace_times(tmp_path):
    run = Run()
    two_members(run)
    # B stops; A heartbeats on. B's session (10 s from its last heartbeat at 1.2 s) expires.
    a_epoch = 0
    for ts in range(2_000, 11_000, 1_000):
        answer = run.send(
            ts, "c1:1", beat("A", run.state.group("g").member("A").member_epoch, None)
        )
        a_epoch = answer["member_epoch"]
    run.expire(11_200, "B")
    answer = run.send(12_000, "c1:1", beat("A", a_epoch, None))
    assert answer["member_epoch"] > a_epoch  # the group epoch moved when B was fenced
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert verdict.passed, verdict.divergence
    assert "cg_timer.session_expired" in verdict.rules
    # Had the coordinator not fenced B, A's answer at 12 s would keep its epoch: not allowed
    # once the deadline is more than LATE_MS behind (at 14 s).
    late = Run()
    two_members(late)
    for ts in range(2_000, 11_000, 1_000):
        late.send(ts, "c1:1", beat("A", late.state.group("g").member("A").member_epoch, None))
    kept = late.send(14_000, "c1:1", beat("A", a_epoch, None))
    assert kept["member_epoch"] == a_epoch
    assert not validate_trace(late.write(tmp_path / "u.jsonl"), shrink=False).passed


def test_the_oracle_judges_only_kip848_events():
    oracle = ConsumerProtocolOracle(consumer_group_config(SETTINGS))
    heartbeat = TraceEvent(T0, "c", REQUEST, 68, 1, 1, "c", {})
    join_group = TraceEvent(T0, "c", REQUEST, 11, 9, 1, "c", {})
    assert oracle.judges(heartbeat) and not oracle.judges(join_group)
