"""The consumer-protocol oracle on OffsetCommit and OffsetFetch of consumer-protocol groups
(oracle/trace/kip848.py, oracle/trace/kip848_offsets.py), on traces the specification writes.

A member joins and is assigned the topic; it commits and fetches by topic name (v9) and by topic
id (v10, as the Java consumer does), with and without its member id and epoch. Such a trace
passes with every event judged; a commit the broker would fence answered as accepted, a fetch
answering an offset nobody committed, and a topic id the header does not name are then checked.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from test_oracle_kip848 import SETTINGS, T0, TOPIC_ID, Run, beat, join

from groupspec.oracle.trace.validate import validate_trace
from groupspec.spec.kip848.events import RequestArrived
from groupspec.vocabulary.requests import (
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    RequestRef,
    TopicPartition,
)
from groupspec.wire.group_apis import request_body, response_body
from groupspec.wire.trace_format import REQUEST, RESPONSE, TraceEvent

TOPIC = SETTINGS["topics"][0]["name"]


def _by_id(entries: Any) -> Any:
    """Topic entries of a v9 body as v10 names them: by id, the name left empty."""
    if entries is None:
        return None
    return [{**{k: v for k, v in e.items() if k != "name"}, "topic_id": TOPIC_ID} for e in entries]


def _v10(key: int, body: dict[str, Any]) -> dict[str, Any]:
    if "groups" in body:
        return {
            **body,
            "groups": [{**g, "topics": _by_id(g.get("topics"))} for g in body["groups"]],
        }
    return {**body, "topics": _by_id(body.get("topics"))}


def send(run: Run, ts: int, conn: str, request: Any, v10: bool = False) -> dict[str, Any]:
    """`request` stepped through the specification and written to the run's trace, at v10
    (topics by id) when asked; the specification's answer."""
    run.correlation += 1
    ref = RequestRef(conn, run.correlation)
    key, body = request_body(request)
    (outcome,) = run.spec.step(run.state, RequestArrived(ref, request), T0 + ts)
    run.state = outcome.state
    (reply,) = outcome.responses
    answer = response_body((reply.body,), request.api_version, (request,))
    version = 10 if v10 else request.api_version
    if v10:
        body, answer = _v10(key, body), _v10(key, answer)
    run.events.append(TraceEvent(T0 + ts, conn, REQUEST, key, version, run.correlation, "c", body))
    run.events.append(
        TraceEvent(T0 + ts + 1, conn, RESPONSE, key, version, run.correlation, body=answer)
    )
    return answer


def commit(epoch: int, offset: int, partition: int = 0) -> OffsetCommitRequest:
    return OffsetCommitRequest(
        "g", (OffsetCommitPartition(TOPIC, partition, offset),), generation_id=epoch, member_id="A"
    )


def fetch(member: str | None, epoch: int) -> OffsetFetchRequest:
    partitions = tuple(TopicPartition(TOPIC, p) for p in range(2))
    return OffsetFetchRequest("g", partitions, True, 9, member, epoch)


def one_member_committing(run: Run) -> int:
    """A joins, is assigned every partition, commits and fetches; its epoch."""
    a = run.send(0, "c1:1", join("A"))
    a = run.send(100, "c1:1", beat("A", a["member_epoch"], a))
    epoch = a["member_epoch"]
    send(run, 200, "c1:2", commit(epoch, 5))
    send(run, 300, "c1:2", commit(epoch, 6, partition=1), v10=True)
    send(run, 400, "c1:2", fetch(None, -1))
    send(run, 500, "c1:2", fetch("A", epoch), v10=True)
    send(run, 600, "c1:2", commit(epoch + 1, 7))
    send(run, 700, "c1:2", fetch("A", epoch + 1))
    return epoch


def test_consumer_group_commits_and_fetches_pass_with_every_event_judged(tmp_path):
    run = Run()
    one_member_committing(run)
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert verdict.passed, verdict.divergence
    assert verdict.judged_fraction == 1.0
    assert verdict.counts.skipped_apis == {}
    assert {
        "cg_offset_commit.epoch_matches",
        "cg_offset_commit.epoch_newer",
        "cg_offset_fetch.without_member",
        "cg_offset_fetch.member",
        "cg_offset_fetch.stale_member_epoch",
    } <= verdict.rules


def test_a_fenced_commit_answered_as_accepted_is_a_divergence(tmp_path):
    run = Run()
    one_member_committing(run)
    stale = next(
        i
        for i, e in enumerate(run.events)
        if e.direction == RESPONSE
        and e.api_key == 8
        and e.body["topics"][0]["partitions"][0]["error_code"]
    )
    body = run.events[stale].body
    topic = body["topics"][0]
    accepted = {
        **body,
        "topics": [{**topic, "partitions": [{**topic["partitions"][0], "error_code": 0}]}],
    }
    run.events[stale] = replace(run.events[stale], body=accepted)
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert not verdict.passed
    assert verdict.divergences[0].api == "OffsetCommit"


def test_a_v10_fetch_answering_an_offset_never_committed_is_a_divergence(tmp_path):
    run = Run()
    one_member_committing(run)
    fetched = next(
        i
        for i, e in enumerate(run.events)
        if e.direction == RESPONSE and e.api_key == 9 and e.api_version == 10
    )
    body = run.events[fetched].body
    group = body["groups"][0]
    topic = group["topics"][0]
    wrong = [{**p, "committed_offset": 99} for p in topic["partitions"]]
    changed = {**body, "groups": [{**group, "topics": [{**topic, "partitions": wrong}]}]}
    run.events[fetched] = replace(run.events[fetched], body=changed)
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert not verdict.passed
    assert verdict.divergences[0].api == "OffsetFetch"
    assert verdict.divergences[0].version == 10


def test_a_topic_id_the_header_does_not_name_is_skipped_and_counted(tmp_path):
    run = Run()
    one_member_committing(run)
    unknown = "00000000-0000-0000-0000-000000000001"
    for i, e in enumerate(run.events):
        if e.api_key == 8 and e.api_version == 10:
            topics = [{**t, "topic_id": unknown} for t in e.body["topics"]]
            run.events[i] = replace(e, body={**e.body, "topics": topics})
    verdict = validate_trace(run.write(tmp_path / "t.jsonl"), shrink=False)
    assert verdict.counts.skipped == 1
    assert verdict.judged_fraction < 1.0
    # The offset committed there is unknown to the oracle: the fetches after it diverge.
    assert {d.api for d in verdict.divergences} == {"OffsetFetch"}
