"""Traces that start mid-stream (`validate --mid-stream`): a trace recorded from the middle of a
group's life is judged from when the oracle learns the group, its earlier events counted as not
judged; a fault after the cut is still found."""

from __future__ import annotations

import io
import json
from pathlib import Path

from test_impl_conformance import MUTATIONS

from groupspec.cli.main import main
from groupspec.conformance.impl_traces import write_impl_trace
from groupspec.oracle.trace.oracle import Oracle
from groupspec.oracle.trace.tracker import OracleSettings
from groupspec.oracle.trace.validate import DIVERGED, PASS, validate_trace
from groupspec.spec.config import CoordinatorConfig
from groupspec.wire.group_apis import HEARTBEAT, LIST_GROUPS

MINUTES = 60_000
MID_STREAM = OracleSettings(mid_stream=True)
COMMIT = "commit skips the generation check"


def cut_trace(path: Path, cut_at: int, seed: int = 1, minutes: int = 3) -> Path:
    """An impl trace whose events before line `cut_at` were never recorded: the recorder
    started mid-stream (responses to requests it did not see are dropped too)."""
    out = io.StringIO()
    write_impl_trace(out, seed=seed, duration_ms=minutes * MINUTES, consumers=4)
    header, *events = out.getvalue().splitlines()
    kept, seen = [header], set()
    for line in events[cut_at - 2 :]:
        event = json.loads(line)
        ref = (event["conn"], event.get("corr"))
        if event["dir"] == "request":
            seen.add(ref)
        elif event["dir"] == "response" and ref not in seen:
            continue
        kept.append(line)
    path.write_text("\n".join(kept) + "\n")
    return path


def test_a_trace_cut_mid_stream_passes_judged_from_when_the_group_is_learned(tmp_path):
    for seed, cut_at in ((1, 100), (2, 60)):
        trace = cut_trace(tmp_path / f"cut-{seed}.jsonl", cut_at, seed)
        verdict = validate_trace(trace, settings=MID_STREAM, shrink=False)
        assert verdict.status == PASS, verdict.to_json()["divergence_groups"]
        assert verdict.counts.groups_learned == 1
        # What came before the group was learned is counted as not judged, never passed.
        assert verdict.counts.held > 0
        assert verdict.counts.judged + verdict.counts.held == verdict.counts.events
        assert 0.85 < verdict.judged_fraction < 1.0


def test_ids_handed_out_before_the_recording_are_learned_as_pending_members(tmp_path):
    # Cut inside the first rounds: members join with ids given (MEMBER_ID_REQUIRED) before
    # the cut, which no response of the trace shows (`learn.pending-member`).
    for seed in (1, 2):
        trace = cut_trace(tmp_path / f"early-{seed}.jsonl", 5, seed, minutes=1)
        verdict = validate_trace(trace, settings=MID_STREAM, shrink=False)
        assert verdict.status == PASS, verdict.to_json()["divergence_groups"]
        assert verdict.counts.pending_members_learned >= 2
        assert verdict.judged_fraction > 0.95


def test_without_mid_stream_the_same_trace_diverges_on_the_unknown_group(tmp_path):
    verdict = validate_trace(cut_trace(tmp_path / "cut.jsonl", 100), shrink=False)
    assert verdict.status == DIVERGED
    rules = {group.first.rule for group in verdict.groups}
    assert "heartbeat.unknown_group" in rules


def test_a_fault_after_the_cut_is_still_found(tmp_path, monkeypatch):
    owner, attribute, replacement = MUTATIONS[COMMIT]
    monkeypatch.setattr(owner, attribute, replacement)
    trace = cut_trace(tmp_path / "faulty.jsonl", 100)
    verdict = validate_trace(trace, settings=MID_STREAM, shrink=False)
    assert verdict.status == DIVERGED
    kinds = {group.first.group_key[:3] for group in verdict.groups}
    assert kinds == {("OffsetCommit", "response", "topics[].partitions[].error_code")}
    assert verdict.judged_fraction > 0.85


def test_the_report_says_what_was_learned_and_held(tmp_path, capsys):
    trace = cut_trace(tmp_path / "cut.jsonl", 100)
    report = tmp_path / "r.json"
    assert main(["validate", str(trace), "--mid-stream", "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "mid-stream: 1 groups learned (learn.group), 0 pending members" in out
    verdict = json.loads(report.read_text())["verdicts"][0]
    assert verdict["mid_stream"]["groups_learned"] == 1
    assert verdict["mid_stream"]["held_events"] > 0
    assert main(["validate", str(trace), "--max-divergences", "1", "--json", str(report)]) == 1
    assert json.loads(report.read_text())["verdicts"][0]["mid_stream"] is None


def test_a_group_not_learned_yet_is_left_out_of_list_groups_and_its_traffic_held():
    oracle = Oracle(CoordinatorConfig(group_initial_rebalance_delay_ms=0), MID_STREAM)
    beat = {
        "group_id": "running",
        "generation_id": 7,
        "member_id": "m-1",
        "group_instance_id": None,
    }
    oracle.request("c", 1, HEARTBEAT, 4, beat, 0, client_id="c")
    assert oracle.response("c", 1, HEARTBEAT, 4, {"error_code": 0}, 1) is None
    oracle.request("admin", 1, LIST_GROUPS, 4, {"states_filter": []}, 2)
    listed = [{"group_id": "running", "protocol_type": "consumer", "group_state": "Stable"}]
    assert (
        oracle.response("admin", 1, LIST_GROUPS, 4, {"error_code": 0, "groups": listed}, 3) is None
    )
    assert not oracle.divergences
    assert oracle.counts.foreign_groups == 1 and oracle.counts.held == 2
    assert oracle.counts.judged == 2  # the ListGroups exchange; the heartbeat was not judged
