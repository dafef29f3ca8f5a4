"""Judging past a divergence: every divergence is reported, grouped by kind, and the oracle
resynchronizes with what was observed, so a trace is judged to its end."""

from __future__ import annotations

import json
from pathlib import Path

from test_impl_conformance import MUTATIONS
from test_oracle import heartbeat, join_body, joined

from groupspec.cli.main import main
from groupspec.conformance.impl_traces import write_impl_trace
from groupspec.oracle.trace.oracle import EARLY, Oracle
from groupspec.oracle.trace.tracker import OracleSettings
from groupspec.oracle.trace.validate import DIVERGED, PASS, validate_trace
from groupspec.spec.config import CoordinatorConfig
from groupspec.wire.group_apis import HEARTBEAT, JOIN_GROUP, SYNC_GROUP

MINUTES = 60_000
COMMIT = "commit skips the generation check"
STATIC = "static replacement keeps the old member id"


def impl_trace(path: Path, seed: int = 1) -> Path:
    with path.open("w") as out:
        write_impl_trace(out, seed=seed, duration_ms=10 * MINUTES, consumers=4)
    return path


def first_generation_zero(source: Path, target: Path) -> Path:
    """The same trace from a coordinator that numbers generations from 0, not 1."""
    with source.open() as lines, target.open("w") as out:
        for number, line in enumerate(lines):
            document = json.loads(line)
            body = document.get("body") if number else None
            for name in ("generation_id", "generation_id_or_member_epoch"):
                if isinstance(body, dict) and isinstance(body.get(name), int) and body[name] > 0:
                    body[name] -= 1
            out.write(json.dumps(document) + "\n")
    return target


def test_two_independent_deviations_are_both_reported_and_the_rest_is_judged(tmp_path, monkeypatch):
    for fault in (COMMIT, STATIC):
        owner, attribute, replacement = MUTATIONS[fault]
        monkeypatch.setattr(owner, attribute, replacement)
    verdict = validate_trace(impl_trace(tmp_path / "t.jsonl"), shrink=False)
    assert verdict.status == DIVERGED
    kinds = {group.first.group_key[:3]: group.count for group in verdict.groups}
    assert kinds.keys() == {
        ("OffsetCommit", "response", "topics[].partitions[].error_code"),
        ("JoinGroup", "response", "members"),
    }
    assert verdict.judged_fraction > 0.95
    # Commits after the static replacement's divergence are judged, and diverge again.
    static_first = next(g.first.line for g in verdict.groups if g.first.api == "JoinGroup")
    commits = next(g for g in verdict.groups if g.first.api == "OffsetCommit")
    assert commits.count > 2 and max(commits.lines) > static_first
    assert verdict.counts.responses_checked >= verdict.counts.requests - 6


def test_a_harmless_deviation_is_reported_once_and_the_trace_judged_past_it(tmp_path):
    good = impl_trace(tmp_path / "good.jsonl")
    assert validate_trace(good, shrink=False).status == PASS
    verdict = validate_trace(first_generation_zero(good, tmp_path / "zero.jsonl"), shrink=False)
    assert [(g.first.api, g.first.field, g.count) for g in verdict.groups] == [
        ("JoinGroup", "generation_id", 1)
    ]
    assert "adopt.generation" in verdict.groups[0].first.resync
    assert verdict.judged_fraction == 1.0


def test_the_report_groups_divergences_and_states_the_share_judged(tmp_path, capsys, monkeypatch):
    owner, attribute, replacement = MUTATIONS[COMMIT]
    monkeypatch.setattr(owner, attribute, replacement)
    trace = first_generation_zero(impl_trace(tmp_path / "t.jsonl"), tmp_path / "z.jsonl")
    report = tmp_path / "report.json"
    assert main(["validate", str(trace), "--json", str(report)]) == 1
    out = capsys.readouterr().out
    assert "% judged" in out and "divergences of 2 kinds" in out and "resynchronized:" in out
    verdict = json.loads(report.read_text())["verdicts"][0]
    assert verdict["judged_fraction"] > 0.95
    groups = verdict["divergence_groups"]
    assert [(g["api"], g["field"]) for g in groups] == [
        ("JoinGroup", "generation_id"),
        ("OffsetCommit", "topics[].partitions[].error_code"),
    ]
    assert sum(g["count"] for g in groups) == verdict["divergence_count"]
    for group in groups:
        # Each excerpt is a trace ending in its group's first divergence.
        assert json.loads(group["excerpt"][-1])["line"] == group["first_line"] == group["lines"][0]


def test_judging_may_stop_after_n_divergences_and_says_what_it_left(tmp_path, monkeypatch):
    owner, attribute, replacement = MUTATIONS[COMMIT]
    monkeypatch.setattr(owner, attribute, replacement)
    trace = impl_trace(tmp_path / "t.jsonl")
    verdict = validate_trace(trace, settings=OracleSettings(max_divergences=1), shrink=False)
    assert len(verdict.divergences) == 1 and "--max-divergences" in verdict.note
    assert verdict.counts.events == 1070 and verdict.judged_fraction < 0.1


def test_an_early_answer_is_reported_once_and_the_group_judged_after_it():
    """A coordinator with no initial rebalance delay, judged as one with Kafka's 3 s: its join
    answer is early; the specification fires its timer ahead of time and judges on."""
    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=3_000))
    oracle.request("a", 1, JOIN_GROUP, 3, join_body(), 0, client_id="c")
    early = oracle.response("a", 1, JOIN_GROUP, 3, joined("c-uuid", "c-uuid", ["c-uuid"]), 5)
    assert early is not None and early.kind == EARLY and "ahead of time" in early.resync
    sync = {"group_id": "g", "generation_id": 1, "member_id": "c-uuid", "group_instance_id": None}
    oracle.request(
        "a",
        2,
        SYNC_GROUP,
        3,
        {**sync, "assignments": [{"member_id": "c-uuid", "assignment": ""}]},
        10,
    )
    oracle.response("a", 2, SYNC_GROUP, 3, {"error_code": 0, "assignment": ""}, 11)
    oracle.request("a", 3, HEARTBEAT, 3, heartbeat("c-uuid"), 3_500)
    oracle.response("a", 3, HEARTBEAT, 3, {"error_code": 0}, 3_501)
    assert oracle.divergences == [early]
