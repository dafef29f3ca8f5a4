"""Apache Kafka's own Java consumer against Apache Kafka's own broker (4.x, one shared by the
module): the eager (range), cooperative (cooperative-sticky) and static (group.instance.id)
scenarios, each recorded through the proxy and judged by the oracle, every event of the trace."""

from __future__ import annotations

import pytest
from java_workload_support import check_java_joins, run_and_judge

from groupspec.record.workload.client_scenarios import SCENARIOS
from groupspec.record.workload.targets import KafkaTarget


@pytest.mark.parametrize("scenario", ["dynamic", "cooperative", "static"])
def test_the_java_consumers_trace_on_kafka_passes(scenario, kafka_4x, tmp_path):
    events = run_and_judge(KafkaTarget(shared=kafka_4x), scenario, tmp_path)
    check_java_joins(events, SCENARIOS[scenario].assignor, static=SCENARIOS[scenario].static)
