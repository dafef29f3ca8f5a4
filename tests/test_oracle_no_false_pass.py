"""No false pass: an undecodable response, a request never answered on an open connection and a
late response are each a divergence, never a silent pass; the recorder keeps an undecodable
response in the trace, and `probe` reports a peer's malformed answer as a verdict."""

from __future__ import annotations

import io
import json

import pytest
from kafka.protocol.consumer.group import OffsetFetchRequest
from serve_support import ServerThread, serve_config
from test_oracle import joined, only_a_joins_while_b_fetches_an_id, two_members_join

from groupspec.cli.main import main
from groupspec.impl.server.server import WireServer
from groupspec.oracle.trace.oracle import LATE, UNANSWERED, UNDECODABLE, Oracle
from groupspec.oracle.trace.tracker import JUDGE_FOREIGN, OracleSettings
from groupspec.oracle.trace.validate import DIVERGED, validate_trace
from groupspec.record.recording import ConnectionRecorder, TraceSink
from groupspec.spec.config import CoordinatorConfig
from groupspec.wire.group_apis import JOIN_GROUP, LIST_GROUPS
from groupspec.wire.trace_format import (
    RESPONSE,
    TraceHeader,
    TraceReading,
    TraceWriter,
    parse_lines,
)

HEADER = '{"format":"groupspec-trace","version":1}\n'
# A heartbeat of a member nobody knows: the specification answers UNKNOWN_MEMBER_ID at once.
HEARTBEAT = (
    '{"ts":%d,"conn":"%s","dir":"request","key":12,"ver":4,"corr":%d,'
    '"body":{"group_id":"g","generation_id":1,"member_id":"m","group_instance_id":null}}\n'
)
ANSWER = (
    '{"ts":%d,"conn":"%s","dir":"response","key":12,"ver":4,"corr":%d,"body":{"error_code":25}}\n'
)
CLOSE = '{"ts":%d,"conn":"%s","dir":"close"}\n'


def verdict_of(tmp_path, *lines: str, late_ms: int | None = None):
    path = tmp_path / "t.jsonl"
    path.write_text(HEADER + "".join(lines))
    argv = ["validate", str(path), "--json", str(tmp_path / "r.json")]
    if late_ms is not None:
        argv += ["--late-response-ms", str(late_ms)]
    code = main(argv)
    return code, json.loads((tmp_path / "r.json").read_text())["verdicts"][0]


def test_an_undecodable_response_is_a_divergence(tmp_path):
    undecodable = (
        '{"ts":2,"conn":"a","dir":"response","key":12,"ver":4,"corr":1,"body":null,'
        '"undecodable":"FrameError: truncated"}\n'
    )
    code, verdict = verdict_of(tmp_path, HEARTBEAT % (1, "a", 1), undecodable)
    assert code == 1 and verdict["status"] == DIVERGED
    assert verdict["divergence"]["kind"] == UNDECODABLE
    assert "truncated" in verdict["divergence"]["reason"]


def test_a_request_never_answered_on_an_open_connection_is_a_divergence(tmp_path):
    later = (HEARTBEAT % (40_000, "b", 1), ANSWER % (40_001, "b", 1))
    code, verdict = verdict_of(tmp_path, HEARTBEAT % (1, "a", 1), *later)
    assert code == 1
    assert verdict["divergence"]["kind"] == UNANSWERED and verdict["divergence"]["line"] == 2
    # Within the bound the answer may still be on its way; a closed connection owes nothing.
    assert verdict_of(tmp_path, HEARTBEAT % (1, "a", 1), *later, late_ms=60_000)[0] == 0
    assert verdict_of(tmp_path, HEARTBEAT % (1, "a", 1), CLOSE % (2, "a"), *later)[0] == 0


def test_a_request_overtaken_on_its_connection_was_never_answered(tmp_path):
    lines = (HEARTBEAT % (1, "a", 1), HEARTBEAT % (2, "a", 2), ANSWER % (3, "a", 2))
    code, verdict = verdict_of(tmp_path, *lines)
    assert code == 1
    assert [(d["kind"], d["line"]) for d in verdict["divergences"]] == [(UNANSWERED, 2)]


def test_a_late_response_is_a_divergence(tmp_path):
    code, verdict = verdict_of(tmp_path, HEARTBEAT % (1, "a", 1), ANSWER % (40_000, "a", 1))
    assert code == 1 and verdict["divergence"]["kind"] == LATE
    assert (
        verdict_of(tmp_path, HEARTBEAT % (1, "a", 1), ANSWER % (40_000, "a", 1), late_ms=50_000)[0]
        == 0
    )


def test_the_recorder_keeps_an_undecodable_response_as_an_event():
    request = OffsetFetchRequest(group_id="g", topics=None)
    request.with_header(correlation_id=7, client_id="c")
    out = io.StringIO()
    sink = TraceSink(TraceWriter(out, TraceHeader()), clock=lambda: 1.0)
    recorder = ConnectionRecorder("a", sink)
    recorder.on_request(bytes(request.encode(version=2, header=True, framed=False)))
    recorder.on_response((7).to_bytes(4, "big") + b"\x00\x01")
    events = list(parse_lines(iter(out.getvalue().splitlines(True)), "t", TraceReading()))
    assert [(e.direction, e.api) for e in events] == [
        ("request", "OffsetFetch"),
        (RESPONSE, "OffsetFetch"),
    ]
    assert events[1].body is None and events[1].undecodable
    assert dict(sink.undecodable) == {"OffsetFetch response": 1}


def test_probe_reports_a_malformed_answer_as_a_verdict(tmp_path, capsys, monkeypatch):
    encode = WireServer._encode

    def corrupt_offset_fetch(self, head, fields):  # type: ignore[no-untyped-def]
        encoded = encode(self, head, fields)
        if head.api_key != 9:
            return encoded
        # A well-framed answer whose body stops after the correlation id and two bytes.
        return (6).to_bytes(4, "big") + encoded[4:8] + b"\x00\x01"

    monkeypatch.setattr(WireServer, "_encode", corrupt_offset_fetch)
    server = ServerThread(serve_config()).start()
    try:
        argv = ["probe", "--target", server.bootstrap, "--probe", "offset-fetch-all"]
        assert main([*argv, "--validate", "--trace-dir", str(tmp_path)]) == 1
    finally:
        server.stop()
    out = capsys.readouterr().out
    assert "does not decode" in out and "diverged" in out
    verdict = validate_trace(tmp_path / "probe-offset-fetch-all.jsonl")
    assert verdict.status == DIVERGED and verdict.divergence is not None
    assert verdict.divergence.kind == UNDECODABLE and verdict.divergence.api == "OffsetFetch"


# -- a shared broker: ListGroups lists groups the trace never named -----------------------------


def list_groups_on_a_shared_broker(settings: OracleSettings) -> Oracle:
    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0), settings)
    two_members_join(oracle, "c-a-uuid")
    oracle.request("admin", 1, LIST_GROUPS, 4, {"states_filter": []}, 10)
    listed = [
        {"group_id": group, "protocol_type": "consumer", "group_state": state}
        for group, state in (("g", "CompletingRebalance"), ("other-run", "Stable"))
    ]
    oracle.response("admin", 1, LIST_GROUPS, 4, {"error_code": 0, "groups": listed}, 11)
    return oracle


def test_groups_outside_the_trace_do_not_fail_list_groups_unless_asked():
    ignoring = list_groups_on_a_shared_broker(OracleSettings())
    assert not ignoring.divergences and ignoring.counts.foreign_groups == 1
    judging = list_groups_on_a_shared_broker(OracleSettings(foreign_groups=JUDGE_FOREIGN))
    assert [d.api for d in judging.divergences] == ["ListGroups"]


@pytest.mark.parametrize(("seen_at", "late"), [(11_500, False), (12_100, True), (20_500, True)])
def test_a_response_a_timer_released_is_late_from_that_timer(seen_at, late):
    """a's JoinGroup waits out a 20 s initial delay; b only fetched a member id, which expires at
    10,002 ms and (Kafka 4.x) ends the join then. Timers fire within the 1 s slack, so the
    answer was due by 11,002 ms: with a 1 s bound, it is late after 12,002 ms. The initial
    delay's own timer (20,001 ms) cannot release it first: the expiry was overdue by then."""
    settings = OracleSettings(late_response_ms=1_000)
    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=20_000), settings)
    only_a_joins_while_b_fetches_an_id(oracle)
    answer = joined("c-a-uuid", "c-a-uuid", ["c-a-uuid"])
    divergence = oracle.response("a", 2, JOIN_GROUP, 9, answer, seen_at)
    if not late:
        assert divergence is None and not oracle.divergences
        return
    assert divergence is not None and divergence.kind == LATE
    assert f"came {seen_at - 11_002} ms after" in divergence.reason
