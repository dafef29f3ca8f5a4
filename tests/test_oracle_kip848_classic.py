"""Classic members inside consumer groups, judged by the consumer-protocol oracle
(oracle/trace/kip848.py with oracle/trace/kip848_classic.py).

A run of the mixed specification (`spec/kip848/mixed.py`) is written as a trace, the classic
member's ids respelled as Kafka spells them (a base64 UUID): a consumer-protocol member
creates the group, a classic member joins it (MEMBER_ID_REQUIRED, then a join), syncs, is told
to rejoin while the consumer member revokes, rejoins, gets its partitions, and heartbeats. Such a
trace must PASS with every event judged and the classic-member rules exercised; a changed answer
diverges; after the last consumer-protocol member leaves, the group is a classic one and its
later requests are counted as skipped, not judged against a state the oracle no longer follows.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groupspec.oracle.trace.kip848 import consumer_group_config
from groupspec.oracle.trace.validate import validate_trace
from groupspec.spec.assignment import Subscription
from groupspec.spec.consumer_protocol import encode_subscription
from groupspec.spec.kip848.events import RequestArrived
from groupspec.spec.kip848.mixed import MixedCoordinatorSpec
from groupspec.spec.kip848.mixed_state import MixedState
from groupspec.vocabulary import consumer_groups as cg
from groupspec.vocabulary.requests import (
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    Received,
    RequestRef,
    SyncGroupRequest,
    TopicPartition,
)
from groupspec.wire.group_apis import client_host_of, request_body, response_body
from groupspec.wire.trace_format import REQUEST, RESPONSE, TraceEvent, TraceHeader, TraceWriter

TOPIC_ID = "6a1c0b4e-2f0d-4c4b-9a55-0f3e2d1c0b0a"
SETTINGS: dict[str, Any] = {
    "session_timeout_ms": 45_000,
    "heartbeat_interval_ms": 1_000,
    "assignment_interval_ms": 0,
    "topics": [{"name": "orders", "topic_id": TOPIC_ID, "partitions": 4}],
}
T0 = 1_700_000_000_000
CLIENT = "c"
CLASSIC = "c2:1"
# How Kafka 4.4.0 spells a classic member's id in a consumer group (a base64 UUID, as its
# consumer-protocol members' ids), not the specification's `c-0`.
KAFKA_ID = "7b1xX0BLQtuHu4bbvElM0Q"


@dataclass
class Run:
    """A mixed coordinator run written as a trace, answered by the specification, with the
    specification's member ids respelled in the trace by `spelling`."""

    spec: MixedCoordinatorSpec = field(
        default_factory=lambda: MixedCoordinatorSpec(consumer_group_config(SETTINGS))
    )
    state: MixedState | None = None
    events: list[TraceEvent] = field(default_factory=list)
    correlation: int = 0
    spelling: dict[str, str] = field(default_factory=lambda: {"c-0": KAFKA_ID})

    def send(self, ts: int, conn: str, request: Any) -> dict[str, Any]:
        """Step `request` at T0 + `ts` on connection `conn`; its Kafka-shaped answer."""
        state = self.state or self.spec.initial_state()
        self.correlation += 1
        ref = RequestRef(conn, self.correlation)
        classic = not isinstance(request, cg.ConsumerGroupHeartbeatRequest)
        event = Received(ref, request) if classic else RequestArrived(ref, request)
        outcome = self.spec.step(state, event, T0 + ts)[0]  # type: ignore[arg-type]
        self.state = outcome.state
        (reply,) = [r for r in outcome.responses if r.ref == ref]
        version = request.api_version
        answer = response_body((reply.body,), version, (request,))
        key, body = request_body(request)
        self.events.append(
            TraceEvent(T0 + ts, conn, REQUEST, key, version, self.correlation, CLIENT, body)
        )
        self.events.append(
            TraceEvent(T0 + ts + 1, conn, RESPONSE, key, version, self.correlation, body=answer)
        )
        return answer

    def write(self, path: Path) -> Path:
        """The run as a trace file, member ids as Kafka spells them."""
        out = io.StringIO()
        writer = TraceWriter(out, TraceHeader("test", consumer_groups=SETTINGS))
        for event in self.events:
            writer.write(_respelled(event, self.spelling))
        path.write_text(out.getvalue())
        return path


def _respelled(event: TraceEvent, spelling: dict[str, str]) -> TraceEvent:
    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return spelling.get(value, value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    return TraceEvent(
        event.ts_ms,
        event.connection,
        event.direction,
        event.api_key,
        event.api_version,
        event.correlation_id,
        event.client_id,
        walk(event.body),
    )


def consumer_join(member_id: str) -> cg.ConsumerGroupHeartbeatRequest:
    return cg.ConsumerGroupHeartbeatRequest(
        "g",
        member_id,
        0,
        rebalance_timeout_ms=30_000,
        subscribed_topic_names=("orders",),
        server_assignor="uniform",
        topic_partitions=(),
    )


def consumer_beat(member_id: str, answer: dict[str, Any]) -> cg.ConsumerGroupHeartbeatRequest:
    """A heartbeat reporting what `answer` assigned (nothing when it assigned nothing new)."""
    assignment = answer.get("assignment")
    entries = assignment["topic_partitions"] if assignment else []
    owned = tuple(
        cg.ConsumerGroupTopicPartitions(e["topic_id"], tuple(e["partitions"])) for e in entries
    )
    return cg.ConsumerGroupHeartbeatRequest(
        "g", member_id, answer["member_epoch"], topic_partitions=owned if assignment else None
    )


def classic_join(member_id: str, owned: tuple[int, ...] = ()) -> JoinGroupRequest:
    subscription = Subscription.of(("orders",), tuple(TopicPartition("orders", p) for p in owned))
    return JoinGroupRequest(
        "g",
        member_id,
        "consumer",
        (JoinGroupProtocol("range", encode_subscription(subscription)),),
        10_000,
        20_000,
        client_id=CLIENT,
        client_host=client_host_of(CLASSIC),
        api_version=5,
    )


def classic_sync(member_id: str, generation: int) -> SyncGroupRequest:
    return SyncGroupRequest(
        "g", generation, member_id, None, "consumer", "range", (), api_version=5
    )


def classic_beat(member_id: str, generation: int) -> HeartbeatRequest:
    return HeartbeatRequest("g", generation, member_id, None, api_version=3)


def mixed_group(run: Run) -> tuple[str, int]:
    """A consumer member A and a classic member settle; the classic member's id and generation."""
    a = run.send(0, "c1:1", consumer_join("A"))
    a = run.send(100, "c1:1", consumer_beat("A", a))
    required = run.send(200, CLASSIC, classic_join(""))
    member_id = required["member_id"]
    joined = run.send(300, CLASSIC, classic_join(member_id))
    run.send(400, CLASSIC, classic_sync(member_id, joined["generation_id"]))
    # A learns of the new epoch and revokes; then the classic member must rejoin.
    a = run.send(500, "c1:1", consumer_beat("A", {"member_epoch": a["member_epoch"]}))
    a = run.send(600, "c1:1", consumer_beat("A", a))
    run.send(700, CLASSIC, classic_beat(member_id, joined["generation_id"]))
    rejoined = run.send(800, CLASSIC, classic_join(member_id))
    synced = run.send(900, CLASSIC, classic_sync(member_id, rejoined["generation_id"]))
    assert synced["error_code"] == 0
    run.send(1_000, CLASSIC, classic_beat(member_id, rejoined["generation_id"]))
    return member_id, rejoined["generation_id"]


def test_a_mixed_run_passes_with_every_event_judged_and_its_rules_exercised(tmp_path):
    run = Run()
    mixed_group(run)
    verdict = validate_trace(run.write(tmp_path / "mixed.jsonl"))
    assert verdict.passed, verdict.divergences
    assert verdict.judged_fraction == 1.0
    assert {
        "cg_classic.join_member_id_required",
        "cg_classic.join_new_member",
        "cg_classic.join_known_member",
        "cg_classic.join_answered",
        "cg_classic.sync_assignment",
        "cg_classic.heartbeat_rejoin",
        "cg_classic.heartbeat_ok",
    } <= verdict.rules


def test_a_changed_classic_answer_diverges_where_it_was_changed(tmp_path):
    run = Run()
    mixed_group(run)
    last = run.events[-1]
    assert last.body is not None
    run.events[-1] = TraceEvent(
        last.ts_ms,
        last.connection,
        last.direction,
        last.api_key,
        last.api_version,
        last.correlation_id,
        body={**last.body, "error_code": 27},  # REBALANCE_IN_PROGRESS where NONE is due
    )
    verdict = validate_trace(run.write(tmp_path / "changed.jsonl"))
    assert not verdict.passed
    (divergence,) = verdict.divergences
    assert divergence.api == "Heartbeat"
    assert divergence.field == "error_code"


def test_an_unbound_member_id_is_not_taken_for_the_classic_member(tmp_path):
    # A heartbeat naming an id no response handed out is an unknown member, whatever the
    # specification calls its own classic member.
    run = Run()
    _, generation = mixed_group(run)
    run.spelling = {"c-0": KAFKA_ID, "c-1": "c-someone-else"}
    run.send(1_100, CLASSIC, classic_beat("c-1", generation))
    verdict = validate_trace(run.write(tmp_path / "unbound.jsonl"))
    assert verdict.passed, verdict.divergences
    assert "cg_classic.unknown_member" in verdict.rules


def test_after_a_downgrade_the_group_is_judged_no_further(tmp_path):
    run = Run()
    member_id, generation = mixed_group(run)
    left = run.send(1_100, "c1:1", cg.ConsumerGroupHeartbeatRequest("g", "A", -1))
    assert left["error_code"] == 0
    assert run.state is not None and run.state.classic.group("g") is not None
    run.send(1_200, CLASSIC, classic_beat(member_id, generation))
    verdict = validate_trace(run.write(tmp_path / "downgrade.jsonl"))
    assert verdict.passed, verdict.divergences
    assert "cg_convert.downgrade" in verdict.rules
    assert verdict.counts.skipped == 1
    assert verdict.counts.skipped_apis == {"Heartbeat (a group converted to classic)": 1}


TRACES = Path(__file__).parent / "traces"


def test_kafkas_own_mixed_groups_pass_with_every_event_judged():
    # Apache Kafka 4.4.0 (record/workload/consumer_protocol.py, scenario "mixed"): a classic
    # consumer (cooperative-sticky) of confluent-kafka and of Kafka's Java client joins a
    # consumer-protocol group, consumes and commits at its generation, and leaves.
    for name in ("kip848-mixed-confluent.jsonl", "kip848-mixed-java.jsonl"):
        verdict = validate_trace(TRACES / name, {"kafka_version": "4.x"}, shrink=False)
        assert verdict.passed, (name, verdict.divergences[:1])
        assert verdict.judged_fraction == 1.0, name
        assert {
            "cg_classic.join_new_member",
            "cg_classic.sync_assignment",
            "cg_classic.heartbeat_rejoin",
            "cg_classic.offset_commit",
            "cg_classic.leave",
        } <= verdict.rules, name


def test_kafkas_own_static_classic_members_and_their_downgrade_pass():
    # Apache Kafka 4.4.0, probe cg-classic-static: a static classic member joins, its restart
    # replaces it, and the consumer-protocol member's instance restarting as a classic consumer
    # of another topic downgrades the group with a rebalance (the KAFKA-19546 fix, 4.3.0's form:
    # the newcomer answered at generation 0); in a second group the same restart with the same
    # subscription downgrades it Stable at the group's epoch.
    verdict = validate_trace(
        TRACES / "kip848-classic-static.jsonl", {"kafka_version": "4.x"}, shrink=False
    )
    assert verdict.passed, verdict.divergences[:1]
    assert verdict.judged_fraction == 1.0
    assert {
        "cg_classic.static_new_member",
        "cg_classic.static_member_replaced",
        "cg_convert.downgrade_on_replacement_rebalance",
        "cg_convert.downgrade_on_replacement",
    } <= verdict.rules
