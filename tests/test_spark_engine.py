"""The Spark engine (local mode) against the in-process engine: same counts, verdicts and
counterexamples; a task killed midway and a resumed checkpoint change nothing; swarm walks give
the same report for the same seed, and swarm verification the same verdicts, counts and union
coverage. One SparkContext serves the whole module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy
import pytest
from swarm_support import TINY_SPACE

from groupspec.checker.bfs import Limits, search
from groupspec.checker.check_report import counterexamples, format_counterexample
from groupspec.checker.spark.session import (
    SparkSettings,
    java_problem,
    package_zip,
    pyspark_problem,
    spark_context,
)
from groupspec.checker.walk import random_walks
from groupspec.cli.main import main
from groupspec.models.preset_models import load_model

pytestmark = pytest.mark.skipif(
    bool(pyspark_problem() or java_problem()),
    reason=f"Spark cannot start here: {pyspark_problem() or java_problem()}",
)

# Two cores, and up to four attempts per task: local mode retries failed tasks only when told.
MASTER = "local[2,4]"
# A group world with symmetry (361 states, but 28 levels: too slow for the Spark engine in CI).
TINY_GROUP = {"evictions": "0", "commits": "0", "max_generation": "1", "partitions": "1"}
TIMINGS = ("elapsed_s", "states_per_second", "workers")


@pytest.fixture(scope="module")
def spark():
    with spark_context(SparkSettings(master=MASTER)) as context:
        yield context


def _figures(result):
    return (
        result.verdict,
        result.distinct_states,
        result.transitions,
        result.depth,
        dict(result.action_counts),
        dict(result.rule_counts),
    )


def _without_timings(document):
    """The document without what depends on the machine: timings, and how often each process's
    memory of transition groups answered (every process remembers on its own)."""
    for key in TIMINGS:
        document.pop(key)
    document.pop("digests")  # of the fields, timings included
    document["groups"] = [item["group"] for item in document["groups"]]
    for item in document.get("liveness", ()):
        item.pop("elapsed_s")
    return document


def test_check_cli_gives_the_in_process_document_on_two_phase(spark, tmp_path, capsys):
    documents = {}
    for engine in ("inprocess", "spark"):
        out = tmp_path / f"{engine}.json"
        assert main(["check", "two-phase", "--engine", engine, "--quiet", "--json", str(out)]) == 0
        document = json.loads(out.read_text())
        # Both engines expand through remembered groups, and report how it went.
        assert all(item["hits"] + item["misses"] > 0 for item in document["groups"])
        documents[engine] = _without_timings(document)
    assert documents["spark"] == documents["inprocess"]
    assert documents["spark"]["distinct_states"] == 288
    assert "verdict: pass" in capsys.readouterr().out


def test_fault_counterexample_is_the_in_process_one(spark):
    from groupspec.checker.spark.bfs import spark_search

    # Without the graph, the path is looked up in the executors' visited sets.
    model = load_model("static-2", {"fault": "KAFKA-8500"}).model
    expected = search(model)
    found = spark_search(spark, model)
    assert found.verdict == expected.verdict == "fail"
    # Every level of this group world is smaller than the in-process engine's batch, so it
    # too stops at the end of the level: the counts agree as well.
    assert _figures(found) == _figures(expected)
    assert [p.path for p in found.problems] == [p.path for p in expected.problems]
    assert len(found.problems[0].path) - 1 == 11
    (example,) = counterexamples(model, found)
    assert example.property_name == "InstanceMapConsistent"
    assert format_counterexample(model, example) == format_counterexample(
        model, counterexamples(model, expected)[0]
    )


def test_two_phase_with_symmetry_and_a_task_killed_midway(spark):
    from groupspec.checker.spark.bfs import SparkOptions, spark_search

    model = load_model("two-phase", {"symmetry": "true"}).model
    options = SparkOptions(partitions=3, fail_first_attempt_at_level=3)
    spark.setJobGroup("killed-task", "a task fails once")
    try:
        found = spark_search(spark, model, record_graph=True, options=options)
    finally:
        spark.setJobGroup("other", "")
    tracker = spark.statusTracker()
    failed = 0
    for job in tracker.getJobIdsForGroup("killed-task"):
        for stage in tracker.getJobInfo(job).stageIds:
            info = tracker.getStageInfo(stage)
            failed += info.numFailedTasks if info else 0
    assert failed >= 1
    expected = search(model, record_graph=True)
    assert _figures(found) == _figures(expected)
    assert found.parents == expected.parents
    assert found.graph.states == expected.graph.states
    assert found.graph.targets == expected.graph.targets


def test_resume_from_a_checkpoint(spark, tmp_path):
    from groupspec.checker.spark.bfs import SparkOptions, spark_search
    from groupspec.checker.spark.checkpoint import CheckpointError

    model = load_model("two-phase", {"resource_managers": "2"}).model
    identity = {"preset": "two-phase", "overrides": {"resource_managers": "2"}}
    options = SparkOptions(checkpoint=tmp_path / "ckpt", identity=identity)
    first = spark_search(spark, model, limits=Limits(max_states=20), options=options)
    assert first.stopped_by == "max_states" and first.verdict == "incomplete"
    levels = sorted(path.name for path in (tmp_path / "ckpt").glob("level-*"))
    # The budget ran out in the middle of the last level its tasks explored: that level counts
    # in the result but is not checkpointed, so a resumed run explores it whole.
    assert levels == [f"level-{level:05d}" for level in range(first.depth)]
    with pytest.raises(CheckpointError, match="--resume"):
        spark_search(spark, model, options=options)
    other = SparkOptions(checkpoint=tmp_path / "ckpt", resume=True, identity={"preset": "x"})
    with pytest.raises(CheckpointError, match="different run"):
        spark_search(spark, model, options=other)
    resumed = spark_search(
        spark,
        model,
        options=SparkOptions(checkpoint=tmp_path / "ckpt", resume=True, identity=identity),
    )
    assert _figures(resumed) == _figures(search(model))


def test_swarm_walks_match_in_process_walks(spark):
    from groupspec.checker.spark.simulate import spark_random_walks

    for preset, overrides, stop in (
        ("two-phase", {"tm_commits_early": "true"}, True),
        ("eager-2", TINY_GROUP, False),
    ):
        model = load_model(preset, overrides).model
        kwargs = {"seed": 5, "runs": 8, "steps": 40, "stop_at_first": stop}
        found = spark_random_walks(spark, model, **kwargs)
        expected = random_walks(model, **kwargs)
        found.elapsed_s = expected.elapsed_s = 0.0
        assert found == expected


def test_swarm_verification_gives_the_local_verdicts_counts_and_coverage(spark, tmp_path):
    space = tmp_path / "tiny.toml"
    space.write_text(TINY_SPACE)
    reports = {}
    for engine, options in (("local", []), ("spark", ["--master", MASTER])):
        out = tmp_path / f"{engine}.json"
        argv = ["swarm", str(space), "--runs", "4", "--seed", "2", "--json", str(out)]
        assert main([*argv, "--engine", engine, *options]) == 1
        reports[engine] = json.loads(out.read_text())

    def per_configuration(report):
        return [
            (c["command"], c["verdict"], c["distinct_states"], c["rules"], c["check"]["violations"])
            for c in report["configurations"]
        ]

    local, on_spark = reports["local"], reports["spark"]
    assert per_configuration(on_spark) == per_configuration(local)
    assert sorted(c["verdict"] for c in local["configurations"]) == [
        "fail",
        "incomplete",
        "pass",
        "pass",
    ]
    assert on_spark["coverage"] == local["coverage"]
    assert on_spark["violations"] == local["violations"]
    assert on_spark["verdict"] == local["verdict"] == "fail"
    assert on_spark["engine"].startswith("spark") and local["engine"].startswith("local")


def test_bad_spark_options_and_a_missing_java(spark, monkeypatch, capsys, tmp_path):
    assert main(["check", "two-phase", "--engine", "spark", "--workers", "2"]) == 2
    assert main(["check", "two-phase", "--master", "local[1]"]) == 2
    assert main(["check", "two-phase", "--engine", "spark", "--resume"]) == 2
    assert main(["simulate", "no-such-preset", "--engine", "spark"]) == 2
    capsys.readouterr()
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    assert main(["check", "two-phase", "--engine", "spark", "--quiet"]) == 2
    assert "openjdk-17-jre-headless" in capsys.readouterr().err


def test_the_package_zip_imports_without_an_installation(tmp_path):
    archive = package_zip(tmp_path)
    names = zipfile.ZipFile(archive).namelist()
    assert "groupspec/models/presets/eager-2.toml" in names
    code = "import groupspec.models.group_world, groupspec.checker.expand, groupspec.spec"
    # -S: site-packages' .pth files are not read, so `groupspec` can come from the zip only;
    # its third-party dependencies (numpy) still come from site-packages.
    site_packages = Path(numpy.__file__).parent.parent
    path = os.pathsep.join([str(archive), str(site_packages)])
    subprocess.run([sys.executable, "-S", "-c", code], check=True, env={"PYTHONPATH": path})


# -- bulk trace validation ---------------------------------------------------------------------


def _corpus(directory, traces, monkeypatch):
    """`traces` short traces of the impl, and one of an impl whose LeaveGroup does not rebalance
    (a seeded fault the oracle must find among them)."""
    from groupspec.conformance.impl_traces import write_impl_trace
    from groupspec.impl import leave as impl_leave

    directory.mkdir()
    for seed in range(traces):
        with (directory / f"trace-{seed:04d}.jsonl").open("w") as out:
            write_impl_trace(out, seed=seed, duration_ms=10_000, consumers=2, churn=False)
    with monkeypatch.context() as patched:
        patched.setattr(impl_leave, "prepare_rebalance", lambda rt, group: None)
        with (directory / "seeded-fault.jsonl").open("w") as out:
            write_impl_trace(out, seed=0, duration_ms=600_000, consumers=4)
    return directory


def test_bulk_validation_of_a_thousand_traces_finds_the_seeded_bad_one(
    spark, tmp_path, monkeypatch, capsys
):
    corpus = _corpus(tmp_path / "corpus", 1_000, monkeypatch)
    (corpus / "corrupt.jsonl").write_text('{"format":"groupspec-trace","version":1}\n{"ts": 1,\n')
    out, summary = tmp_path / "verdicts", tmp_path / "summary.json"
    code = main(
        ["validate", "--engine", "spark", str(corpus), "--out", str(out), "--json", str(summary)]
    )
    assert code == 1
    document = json.loads(summary.read_text())
    assert document["traces"] == 1_002
    assert document["by_status"] == {"pass": 1_000, "diverged": 1, "bad-input": 1}
    assert [d["trace"].rsplit("/", 1)[1] for d in document["diverged"]] == ["seeded-fault.jsonl"]
    from pyspark.sql import SparkSession

    verdicts = SparkSession(spark).read.parquet(str(out))
    bad = verdicts.filter("status = 'bad-input'").collect()
    assert len(bad) == 1 and "corrupt.jsonl:2" in bad[0]["error"]
    assert "diverged: " in capsys.readouterr().out


def test_bulk_validation_reads_a_parquet_dataset_of_trace_lines(spark, tmp_path, monkeypatch):
    from pyspark.sql import SparkSession

    corpus = _corpus(tmp_path / "corpus", 20, monkeypatch)
    rows = [
        (path.name, number, text)
        for path in sorted(corpus.glob("*.jsonl"))
        for number, text in enumerate(path.read_text().splitlines(), start=1)
    ]
    dataset = tmp_path / "traces.parquet"
    SparkSession(spark).createDataFrame(rows, ["trace", "line", "text"]).write.parquet(str(dataset))
    out = tmp_path / "verdicts"
    assert main(["validate", "--engine", "spark", str(dataset), "--out", str(out)]) == 1
    statuses = {
        r["trace"]: r["status"] for r in SparkSession(spark).read.parquet(str(out)).collect()
    }
    assert len(statuses) == 21 and statuses.pop("seeded-fault.jsonl") == "diverged"
    assert set(statuses.values()) == {"pass"}
