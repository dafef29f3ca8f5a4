"""kafka-python consumers against `groupspec serve` on loopback (eager range,
cooperative-sticky, static membership)."""

from __future__ import annotations

import pytest
from serve_scenarios import run_group_scenario
from serve_support import ServerThread, serve_config

from groupspec.record.workload.members import python_member


@pytest.fixture
def server(tmp_path):
    thread = ServerThread(serve_config(data_dir=tmp_path, topics={"t": 6})).start()
    yield thread
    thread.stop()


@pytest.mark.parametrize(
    ("assignor", "static"),
    [("range", False), ("cooperative-sticky", False), ("range", True)],
    ids=["eager-range", "cooperative-sticky", "static-range"],
)
def test_kafka_python_group(server, assignor, static):
    def member(name: str):
        options = {"assignor": assignor}
        if static:
            options["instance_id"] = f"static-{name}"
        return python_member(name, "kafka-python", server.bootstrap, "g", "t", **options)

    run_group_scenario(server, member, topic="t", group="g")
