"""Shrinking excerpts (oracle/trace/shrink.py): a minimal excerpt still diverges as the trace did
and loses no single request/response pair without ceasing to; a budget leaves excerpts marked
not fully shrunk; shrinking never changes a verdict; forks and future keys, which shrinking
reuses prefixes and stops replays with, judge as the oracle they came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_oracle_resync import first_generation_zero

from groupspec.bench.divergent_traces import write_divergent_trace
from groupspec.cli.main import main
from groupspec.conformance.impl_traces import write_impl_trace
from groupspec.oracle.trace.oracle import Divergence, ObservationError, Oracle
from groupspec.oracle.trace.shrink import MINIMAL, NOT_FULLY_SHRUNK, NOT_SHRUNK
from groupspec.oracle.trace.tracker import TooAmbiguous
from groupspec.oracle.trace.validate import DIVERGED, Verdict, validate_trace
from groupspec.spec.config import CoordinatorConfig
from groupspec.wire.trace_format import REQUEST, TraceEvent, TraceReading, parse_lines, text_lines

SECONDS = 1_000
# The impl's traces are written with no initial rebalance delay (conformance/impl_traces.py).
CONFIG = CoordinatorConfig(group_initial_rebalance_delay_ms=0)


def divergent_trace(tmp_path: Path, seed: int, seconds: int = 40, rate: float = 0.05) -> Path:
    """A short trace of the impl (churn) with a seeded share of its responses edited."""
    source = tmp_path / f"impl-{seed}.jsonl"
    with source.open("w") as out:
        write_impl_trace(out, seed=seed, duration_ms=seconds * SECONDS, consumers=3)
    target = tmp_path / f"divergent-{seed}.jsonl"
    write_divergent_trace(source, target, seed, rate)
    return target


def excerpt_events(group_excerpt: tuple[str, ...]) -> list[tuple[int, TraceEvent]]:
    """An excerpt's lines as numbered trace events."""
    header = json.dumps({"format": "groupspec-trace", "version": 1})
    documents = [json.loads(line) for line in group_excerpt]
    lines = [header] + [json.dumps({k: v for k, v in d.items() if k != "line"}) for d in documents]
    events = list(parse_lines(iter(lines), "excerpt", TraceReading()))
    return [(d["line"], e) for d, e in zip(documents, events, strict=True)]


def diverges_as(events: list[tuple[int, TraceEvent]], target: Divergence) -> bool:
    """Replayed from an empty coordinator, with nothing reused: whether `events` diverge at the
    target's line for the target's reason, against the same allowed responses."""
    oracle = Oracle(CONFIG)
    try:
        for line, event in events:
            oracle.observe(event, line)
    except (ObservationError, TooAmbiguous):
        return False
    return any(
        (d.line, d.reason, d.allowed) == (target.line, target.reason, target.allowed)
        for d in oracle.divergences
    )


def without_pair(
    events: list[tuple[int, TraceEvent]], pair: tuple[str, int]
) -> list[tuple[int, TraceEvent]]:
    return [
        (n, e)
        for n, e in events
        if e.direction == "close" or (e.connection, e.correlation_id) != pair
    ]


def judgement(verdict: Verdict) -> dict[str, Any]:
    """Everything a verdict says but its excerpts and how long it took."""
    document = verdict.to_json()
    del document["elapsed_s"], document["excerpt"]
    for group in document["divergence_groups"]:
        del group["excerpt"], group["excerpt_shrink"]
    return document


@pytest.mark.parametrize("seed", [1, 2])
def test_a_minimal_excerpt_diverges_alike_and_loses_no_pair(tmp_path, seed):
    trace = divergent_trace(tmp_path, seed)
    verdict = validate_trace(trace, shrink_effort=None)
    assert verdict.status == DIVERGED
    checked = 0
    for group in verdict.groups:
        if group.first.kind in ("unanswered", "late"):
            assert group.shrink.status == NOT_SHRUNK
            continue
        assert group.shrink.status == MINIMAL, group.shrink
        events = excerpt_events(group.excerpt)
        assert events[-1][0] == group.first.line
        assert diverges_as(events, group.first)
        target = (group.first.connection, group.first.correlation_id)
        for _, event in events:
            pair = (event.connection, event.correlation_id)
            if event.direction == REQUEST and pair != target:
                assert not diverges_as(without_pair(events, pair), group.first), pair
        checked += 1
    assert checked >= 3


def test_shrinking_changes_no_verdict_and_a_spent_budget_is_said(tmp_path):
    trace = divergent_trace(tmp_path, 3, seconds=90)
    plain = validate_trace(trace, shrink=False)
    budgeted = validate_trace(trace, shrink_effort=0.05)
    full = validate_trace(trace, shrink_effort=None)
    assert judgement(plain) == judgement(budgeted) == judgement(full)
    assert {g.shrink.status for g in plain.groups} == {NOT_SHRUNK}
    statuses = [g.shrink.status for g in budgeted.groups]
    assert NOT_FULLY_SHRUNK in statuses
    for group, whole in zip(budgeted.groups, full.groups, strict=True):
        # Whatever the budget, an excerpt ends in its divergence, and diverges there.
        assert json.loads(group.excerpt[-1])["line"] == group.first.line
        assert diverges_as(excerpt_events(group.excerpt), group.first)
        if group.shrink.status == NOT_FULLY_SHRUNK:
            assert "--shrink" in group.shrink.why and group.shrink.steps > 0
            assert len(whole.excerpt) <= len(group.excerpt)
    shrink = budgeted.to_json()["divergence_groups"][statuses.index(NOT_FULLY_SHRUNK)]
    assert shrink["excerpt_shrink"]["status"] == NOT_FULLY_SHRUNK
    assert shrink["excerpt_shrink"]["why"]


def test_the_text_report_says_how_far_each_excerpt_was_shrunk(tmp_path, capsys):
    trace = divergent_trace(tmp_path, 3, seconds=90)
    assert main(["validate", str(trace), "--shrink"]) == 1
    text = capsys.readouterr().out
    assert "lines, minimal: no request/response pair can be left out):" in text
    assert "not fully shrunk" not in text
    assert main(["validate", str(trace), "--no-shrink"]) == 1
    text = capsys.readouterr().out
    assert "not shrunk: shrinking is off (--no-shrink)" in text
    # A long excerpt shows its last lines, up to the divergence.
    assert "lines before these (every line is in the --json report)" in text
    assert main(["validate", str(trace), "--shrink", "--no-shrink"]) == 2


def test_a_missing_response_is_not_shrunk_and_says_why(tmp_path):
    source = tmp_path / "impl.jsonl"
    with source.open("w") as out:
        write_impl_trace(out, seed=5, duration_ms=60 * SECONDS, consumers=2)
    lines = source.read_text().splitlines()
    # The last response of a heartbeat left out: that request is never answered.
    last = max(i for i, line in enumerate(lines) if '"response"' in line and '"Heartbeat"' in line)
    missing = tmp_path / "missing.jsonl"
    missing.write_text("\n".join(lines[:last] + lines[last + 1 :]) + "\n")
    verdict = validate_trace(missing, shrink_effort=None)
    kinds = {g.first.kind: g for g in verdict.groups}
    assert "unanswered" in kinds
    assert kinds["unanswered"].shrink.status == NOT_SHRUNK
    assert "missing or late" in kinds["unanswered"].shrink.why


def two_groups(tmp_path: Path, seed_g: int, seed_h: int) -> Path:
    """Trace `seed_g` of the impl as group g, and trace `seed_h` from a coordinator numbering
    generations from 0 as group h, merged by time (connections told apart)."""
    paths = []
    for seed in (seed_g, seed_h):
        path = tmp_path / f"impl-{seed}.jsonl"
        with path.open("w") as out:
            write_impl_trace(out, seed=seed, duration_ms=30 * SECONDS, consumers=2)
        paths.append(path)
    paths[1] = first_generation_zero(paths[1], tmp_path / "zero.jsonl")
    events = []
    for path, group, port in ((paths[0], "g", "1"), (paths[1], "h", "2")):
        for line in path.read_text().splitlines()[1:]:
            document = json.loads(line)
            document["conn"] = f"{document['conn']}-{port}"
            if isinstance(document.get("body"), dict) and "group_id" in document["body"]:
                document["body"]["group_id"] = group
            events.append(document)
    events.sort(key=lambda d: d["ts"])  # stable: each trace keeps its order
    merged = tmp_path / "two-groups.jsonl"
    header = paths[0].read_text().splitlines()[0]
    merged.write_text("\n".join([header, *map(json.dumps, events)]) + "\n")
    return merged


def test_the_excerpt_of_one_group_leaves_the_others_out_and_is_shrunk(tmp_path):
    """The excerpt starts with the divergent group's events only (so the run that judged the
    trace is no prefix of it), and is shrunk from there."""
    verdict = validate_trace(two_groups(tmp_path, 7, 8), shrink_effort=None)
    assert verdict.status == DIVERGED
    for group in verdict.groups:
        assert group.shrink.status == MINIMAL
        shown = [json.loads(line) for line in group.excerpt]
        assert all(d["body"].get("group_id") != "g" for d in shown if d["dir"] == "request")
        assert diverges_as(excerpt_events(group.excerpt), group.first)


def test_an_excerpt_that_needs_another_group_is_shrunk_from_the_whole_trace(tmp_path):
    """With one seed twice, both groups' members are handed the same ids: the second group's
    first join diverges because of the first group's, and its excerpt keeps what it needs of
    that group."""
    verdict = validate_trace(two_groups(tmp_path, 7, 7), shrink_effort=None)
    group = verdict.groups[0]
    assert group.shrink.status == MINIMAL
    shown = [json.loads(line) for line in group.excerpt]
    assert any(d["body"].get("group_id") == "g" for d in shown if d["dir"] == "request")
    assert diverges_as(excerpt_events(group.excerpt), group.first)


def test_a_fork_judges_as_the_oracle_it_came_from(tmp_path):
    trace = divergent_trace(tmp_path, 4, seconds=60)
    with trace.open("rb") as handle:
        events = list(parse_lines(text_lines(handle, str(trace)), str(trace), TraceReading()))
    numbered = list(enumerate(events, start=2))
    middle = len(numbered) // 2
    oracle = Oracle(CONFIG)
    for line, event in numbered[:middle]:
        oracle.observe(event, line)
    fork = oracle.fork()
    assert fork.future_key() == oracle.future_key()
    for line, event in numbered[middle:]:
        oracle.observe(event, line)
    assert fork.future_key() != oracle.future_key()  # the fork stayed where it was
    for line, event in numbered[middle:]:
        fork.observe(event, line)
    assert fork.divergences == oracle.divergences and oracle.divergences
    assert fork.future_key() == oracle.future_key()
    assert fork.counts == oracle.counts
