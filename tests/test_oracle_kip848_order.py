"""Response order in the consumer-protocol oracle (oracle/trace/kip848_order.py).

Kafka may answer two heartbeats of one group in the other order than it processed them. Two
traces recorded from Kafka 4.4.0 under load (tests/traces/kip848-reordered-*.jsonl) show it and
must PASS; traces written here from the specification, their events then reordered, check that
only the orders some processing order explains pass: a heartbeat whose answer shows a join seen
after its response, or seen past the reorder window, still diverges, and so does a join whose
response differs from the answer it was given when it went first.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from test_oracle_kip848 import T0, Run, beat, join

from groupspec.oracle.trace.kip848 import MAX_HYPOTHESES
from groupspec.oracle.trace.kip848_order import AHEAD_DEPTH, InFlight, may_precede, orders
from groupspec.oracle.trace.tracker import OracleSettings
from groupspec.oracle.trace.validate import validate_trace
from groupspec.wire.trace_format import TraceEvent

TRACES = Path(__file__).parent / "traces"


@pytest.mark.parametrize(
    "name", ["kip848-reordered-confluent.jsonl", "kip848-reordered-java.jsonl"]
)
def test_kafka_traces_answering_out_of_processing_order_pass(name):
    # Each holds a heartbeat whose response shows the effect of another member's heartbeat
    # whose own response is seen later (confluent: lines 42-48; java: lines 64-67).
    verdict = validate_trace(TRACES / name, shrink=False)
    assert verdict.passed, verdict.divergence
    assert verdict.judged_fraction == 1.0


def a_stable_member_then_a_join_and_a_heartbeat(run: Run) -> list[TraceEvent]:
    """A owns all four partitions; then B's join (conn c2) is processed before A's heartbeat
    (conn c1), whose answer revokes two partitions. Returns B's and A's request and response."""
    a = run.send(0, "c1:1", join("A"))
    a = run.send(1_000, "c1:1", beat("A", a["member_epoch"], a))
    run.send(2_000, "c2:1", join("B"))
    revoked = run.send(2_010, "c1:1", beat("A", a["member_epoch"], None))
    assert revoked["assignment"]["topic_partitions"][0]["partitions"] == [0, 1]
    b_request, b_response, a_request, a_response = run.events[-4:]
    del run.events[-4:]
    return [b_request, b_response, a_request, a_response]


def at(event: TraceEvent, ts: int) -> TraceEvent:
    return replace(event, ts_ms=T0 + ts)


def test_a_join_answered_after_the_heartbeat_it_preceded_passes(tmp_path):
    run = Run()
    b_request, b_response, a_request, a_response = a_stable_member_then_a_join_and_a_heartbeat(run)
    run.events += [
        at(b_request, 2_000),
        at(a_request, 2_010),
        at(a_response, 2_020),
        at(b_response, 2_030),
    ]
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert verdict.passed, verdict.divergence
    assert verdict.judged_fraction == 1.0
    assert verdict.counts.max_hypotheses > 1


def test_a_heartbeat_answered_after_the_join_it_preceded_passes(tmp_path):
    # The other way round: A's heartbeat goes first (its answer shows no join), B's join second;
    # B's response is seen first. Stepped in response order, A's answer would revoke.
    run = Run()
    a = run.send(0, "c1:1", join("A"))
    a = run.send(1_000, "c1:1", beat("A", a["member_epoch"], a))
    kept = run.send(2_000, "c1:1", beat("A", a["member_epoch"], None))
    assert kept["assignment"] is None
    run.send(2_010, "c2:1", join("B"))
    a_request, a_response, b_request, b_response = run.events[-4:]
    del run.events[-4:]
    run.events += [
        at(a_request, 2_000),
        at(b_request, 2_010),
        at(b_response, 2_020),
        at(a_response, 2_030),
    ]
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert verdict.passed, verdict.divergence


def test_a_heartbeat_showing_a_join_seen_only_after_its_response_diverges(tmp_path):
    run = Run()
    b_request, b_response, a_request, a_response = a_stable_member_then_a_join_and_a_heartbeat(run)
    run.events += [
        at(a_request, 2_010),
        at(a_response, 2_020),
        at(b_request, 2_030),
        at(b_response, 2_040),
    ]
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert not verdict.passed
    first = verdict.divergence
    assert first is not None
    assert (first.line, first.api, first.field) == (7, "ConsumerGroupHeartbeat", "assignment")


def test_a_join_seen_past_the_reorder_window_cannot_go_first(tmp_path):
    run = Run()
    b_request, b_response, a_request, a_response = a_stable_member_then_a_join_and_a_heartbeat(run)
    # A's heartbeat is seen 1.5 s before B's join, and answered after it.
    run.events += [
        at(a_request, 2_000),
        at(b_request, 3_500),
        at(a_response, 3_600),
        at(b_response, 3_610),
    ]
    path = run.write(tmp_path / "t.jsonl")
    verdict = validate_trace(path, settings=OracleSettings(reorder_window_ms=1_000), shrink=False)
    assert not verdict.passed
    first = verdict.divergence
    assert first is not None
    assert (first.line, first.field) == (8, "assignment")
    wide = validate_trace(path, settings=OracleSettings(reorder_window_ms=2_000), shrink=False)
    assert wide.passed, wide.divergence


def test_the_answer_of_a_request_that_went_first_is_compared_when_it_arrives(tmp_path):
    run = Run()
    b_request, b_response, a_request, a_response = a_stable_member_then_a_join_and_a_heartbeat(run)
    body = dict(b_response.body or {}, member_epoch=(b_response.body or {})["member_epoch"] + 1)
    run.events += [
        at(b_request, 2_000),
        at(a_request, 2_010),
        at(a_response, 2_020),
        at(replace(b_response, body=body), 2_030),
    ]
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert not verdict.passed
    first = verdict.divergence
    assert first is not None
    assert (first.line, first.field) == (9, "member_epoch")


def test_requests_of_one_connection_or_of_other_groups_never_go_first():
    judged = InFlight(("c1", 7), 1_000.0, frozenset({"g"}))
    assert may_precede(judged, InFlight(("c2", 3), 1_500.0, frozenset({"g"})), 1_000)
    assert not may_precede(judged, InFlight(("c1", 8), 1_001.0, frozenset({"g"})), 1_000)
    assert not may_precede(judged, InFlight(("c2", 3), 1_001.0, frozenset({"h"})), 1_000)
    assert not may_precede(judged, InFlight(("c2", 3), 2_001.0, frozenset({"g"})), 1_000)
    # A request naming no group the oracle can read may touch any.
    assert may_precede(judged, InFlight(("c2", 3), 1_001.0, None), 1_000)


def test_orders_takes_every_sequence_of_candidates_up_to_the_depth_and_the_limit():
    def take(path: tuple[str, ...], ref: tuple[str, int]) -> list[tuple[str, ...]]:
        return [(*path, ref[0])]

    three = [("a", 1), ("b", 1), ("c", 1)]
    found = orders((), three, take, 100, 3)
    assert len(found) == 1 + 3 + 6 + 6 and len(set(found)) == len(found)
    assert found[0] == () and {len(p) for p in found[1:4]} == {1}
    assert [len(p) for p in orders((), three, take, 100, 2)] == [0] + [1] * 3 + [2] * 6
    assert len(orders((), three, take, 5, 3)) == 5


def test_the_gaps_docs_oracle_md_quotes_are_the_traces():
    # docs/oracle.md, "Response order in the consumer protocol", quotes these from the traces.
    def gap(name: str, first: int, second: int) -> float:
        lines = (TRACES / name).read_text().splitlines()
        return json.loads(lines[second - 1])["ts"] - json.loads(lines[first - 1])["ts"]

    def held(name: str) -> int:
        return validate_trace(TRACES / name, shrink=False).counts.max_hypotheses

    doc = (Path(__file__).parent.parent / "docs" / "oracle.md").read_text()
    section = doc[doc.index("## Response order in the consumer protocol") :]
    quoted = {
        f"{gap('kip848-reordered-confluent.jsonl', 42, 43):.0f} ms later (line 43",
        f"{gap('kip848-reordered-confluent.jsonl', 44, 48):.0f} ms after Dqe's",
        f"{gap('kip848-reordered-java.jsonl', 64, 65):.0f} ms later\n  (line 65)",
        f"{gap('kip848-reordered-java.jsonl', 66, 67):.1f} ms after it",
        f"cut at `MAX_HYPOTHESES` ({MAX_HYPOTHESES})",
        f"At most {AHEAD_DEPTH} requests go ahead",
        f"traces above holds at most {held('kip848-reordered-confluent.jsonl')} and "
        f"{held('kip848-reordered-java.jsonl')} hypotheses",
        f"(default {OracleSettings.reorder_window_ms:,} ms",
    }
    assert {q for q in quoted if q not in section} == set()
