"""Apache Kafka's own Java consumer (`groupspec workload --client java`) against `groupspec
serve`: the eager (range) and cooperative (cooperative-sticky) scenarios, each recorded through
the proxy and judged by the oracle, every event of the trace. The static scenario on serve runs
with the other client libraries in tests/test_oracle_real_clients.py; against Apache Kafka's
broker, in tests/test_kafka_java_workload.py."""

from __future__ import annotations

import pytest
from java_workload_support import check_java_joins, run_and_judge

from groupspec.cli.main import main
from groupspec.record.workload.client_scenarios import SCENARIOS
from groupspec.record.workload.targets import ServeTarget


@pytest.mark.parametrize("scenario", ["dynamic", "cooperative"])
def test_the_java_consumers_trace_on_serve_passes(scenario, tmp_path):
    events = run_and_judge(ServeTarget(), scenario, tmp_path)
    check_java_joins(events, SCENARIOS[scenario].assignor, static=False)


def test_the_java_client_is_one_of_the_workload_clients(tmp_path, capsys):
    assert main(["workload", "--client", "javaa", "--trace-dir", str(tmp_path)]) == 2
    assert "java" in capsys.readouterr().err
    assert all("java" in scenario.clients for scenario in SCENARIOS.values())
