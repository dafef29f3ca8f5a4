"""Real clients' traffic with `groupspec serve` validates against the specification: the static
scenario (three static members, one restarts with its instance id, one is killed) with
kafka-python, aiokafka, confluent-kafka and Kafka's own Java consumer, recorded by `groupspec
workload`, then judged by `groupspec validate`. (tests/test_record_workload.py does the same for
kafka-python's dynamic scenario, tests/test_java_workload.py for Java's dynamic and cooperative
ones.)"""

from __future__ import annotations

import json

from groupspec.cli.main import main

CLIENTS = ("kafka-python", "aiokafka", "confluent", "java")


def test_static_scenario_traces_of_four_client_libraries_pass(tmp_path):
    traces = tmp_path / "traces"
    argv = ["workload", "--client", "all", "--target", "serve", "--scenario", "static"]
    assert main([*argv, "--trace-dir", str(traces)]) == 0
    files = sorted(traces.glob("*.jsonl"))
    assert [f.name for f in files] == sorted(f"{client}-static.jsonl" for client in CLIENTS)
    report = tmp_path / "report.json"
    assert main(["validate", *map(str, files), "--json", str(report)]) == 0
    verdicts = json.loads(report.read_text())["verdicts"]
    assert [v["status"] for v in verdicts] == ["pass"] * len(CLIENTS)
    assert [v["judged_fraction"] for v in verdicts] == [1.0] * len(CLIENTS)
    # Each run was judged on real traffic: joins, syncs, heartbeats and commits were checked.
    assert all(v["responses_checked"] > 50 for v in verdicts)
