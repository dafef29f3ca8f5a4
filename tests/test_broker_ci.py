"""The copy-paste CI job for a broker's own repository (docs/ci/broker-conformance.yml): the
workflow parses, its commands exist, and its `groupspec ci` command, run against `groupspec
serve`, records, validates and reports; `validate --baseline` fails only on new kinds of
divergence."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import yaml
from test_oracle_resync import first_generation_zero

from groupspec.cli.main import build_parser, main
from groupspec.conformance.impl_traces import write_impl_trace

WORKFLOW = Path(__file__).resolve().parent.parent / "docs" / "ci" / "broker-conformance.yml"


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def job_command() -> list[str]:
    """The workflow's `groupspec ci` command, as argv after `groupspec`."""
    steps = workflow()["jobs"]["conformance"]["steps"]
    runs = [s["run"] for s in steps if str(s.get("run", "")).startswith("groupspec ")]
    assert len(runs) == 1, runs
    return shlex.split(runs[0])[1:]


def test_the_workflow_parses_and_uploads_the_report_even_on_failure():
    document = workflow()
    steps = document["jobs"]["conformance"]["steps"]
    names = [s.get("name", s.get("uses", "")) for s in steps]
    assert any("EDIT" in name for name in names), "the broker's start step must say to edit it"
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact"))
    assert upload["if"] == "always()" and upload["with"]["path"] == "groupspec-report"
    assert "BROKER" in document["env"] and "GROUPSPEC_SOURCE" in document["env"]


def test_every_groupspec_command_of_the_workflow_parses():
    argv = job_command()
    assert argv[0] == "ci"
    args = build_parser().parse_args(argv)
    assert args.target == "$BROKER" and args.baseline == Path(".groupspec/baseline.toml")
    assert args.out == Path("groupspec-report")


def test_the_job_command_against_serve_records_validates_and_reports(tmp_path):
    baseline = tmp_path / "baseline.toml"
    baseline.write_text("")  # accepts nothing
    argv = [
        {"$BROKER": "serve", "groupspec-report": str(tmp_path / "out")}.get(a, a)
        for a in job_command()
    ]
    argv[argv.index(".groupspec/baseline.toml")] = str(baseline)
    # Small: no real-client workload (tests/test_record_workload.py runs that command), two probes.
    code = main(
        [*argv, "--no-workloads", "--probe", "first-generation", "--probe", "static-rejoin"]
    )
    assert code == 0
    out = tmp_path / "out"
    report = json.loads((out / "report.json").read_text())
    assert [v["status"] for v in report["verdicts"]] == ["pass", "pass"]
    assert report["baseline"]["new_divergence_groups"] == 0
    text = (out / "report.txt").read_text()
    assert text.startswith("groupspec ci: 2 traces judged: 2 passed, 0 diverged; no divergence")
    assert "PASS" in text and "No divergence" in (out / "report.html").read_text()
    script = (out / "commands.sh").read_text().splitlines()
    assert script[1].startswith("groupspec probe --target serve")
    assert script[2] == (
        f"groupspec validate {out}/traces/*.jsonl --json {out}/report.json --baseline {baseline}"
    )


def test_bad_validate_options_fail_before_the_broker_is_touched(tmp_path, capsys):
    code = main(["ci", "--target", "serve", "--out", str(tmp_path / "o"), "--", "--tolerate", "x"])
    assert code == 2
    assert "--tolerate" in capsys.readouterr().err
    assert not list((tmp_path / "o" / "traces").iterdir())


def diverging_trace(tmp_path: Path) -> Path:
    """A short impl trace from a coordinator numbering generations from 0."""
    source = tmp_path / "impl.jsonl"
    with source.open("w") as out:
        write_impl_trace(out, seed=3, duration_ms=30_000, consumers=2)
    return first_generation_zero(source, tmp_path / "zero.jsonl")


def test_a_baseline_accepts_known_kinds_and_fails_on_new_ones(tmp_path, capsys):
    trace = diverging_trace(tmp_path)
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    assert main(["validate", str(trace), "--no-shrink", "--baseline", str(empty)]) == 1
    written = tmp_path / "baseline.toml"
    assert main(["validate", str(trace), "--no-shrink", "--write-baseline", str(written)]) == 1
    assert 'api = "JoinGroup"' in written.read_text()
    capsys.readouterr()
    report = tmp_path / "r.json"
    args = ["validate", str(trace), "--no-shrink", "--baseline", str(written)]
    assert main([*args, "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "[accepted by the baseline: first seen at" in out and "0 new kinds" in out
    groups = json.loads(report.read_text())["verdicts"][0]["divergence_groups"]
    assert groups and all(g["accepted_by_baseline"] for g in groups)


def test_a_baseline_entry_without_field_or_rule_accepts_any_and_unused_ones_are_named(
    tmp_path, capsys
):
    trace = diverging_trace(tmp_path)
    baseline = tmp_path / "b.toml"
    baseline.write_text(
        '[[accepted]]\napi = "JoinGroup"\nkind = "response"\nwhy = "gen 0"\n\n'
        '[[accepted]]\napi = "OffsetCommit"\nkind = "response"\n\n'
        '[[accepted]]\napi = "Heartbeat"\nkind = "late"\n'
    )
    assert main(["validate", str(trace), "--no-shrink", "--baseline", str(baseline)]) == 0
    assert "accepted but not seen in these traces (fixed?): Heartbeat, late" in (
        capsys.readouterr().out
    )


def test_a_bad_baseline_is_bad_input_naming_the_file_and_line(tmp_path, capsys):
    trace = diverging_trace(tmp_path)
    baseline = tmp_path / "b.toml"
    baseline.write_text(
        '[[accepted]]\napi = "JoinGroup"\nkind = "response"\n\n[[accepted]]\napi = "X"\n'
    )
    assert main(["validate", str(trace), "--baseline", str(baseline)]) == 2
    assert f"{baseline}:5: accepted entry 2 has no 'kind'" in capsys.readouterr().err
    baseline.write_text('[[accepted]]\napi = "JoinGroup"\nkind = "response"\nfeild = "x"\n')
    assert main(["validate", str(trace), "--baseline", str(baseline)]) == 2
    assert f"{baseline}:1: unknown key 'feild'" in capsys.readouterr().err
