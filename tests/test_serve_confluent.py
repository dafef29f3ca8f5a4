"""confluent-kafka (librdkafka) consumers against `groupspec serve` on loopback."""

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
    [("range", False), ("cooperative-sticky", True)],
    ids=["range", "cooperative-sticky-static"],
)
def test_confluent_group(server, assignor, static):
    def member(name: str):
        options = {"assignor": assignor}
        if static:
            options["instance_id"] = f"static-{name}"
        return python_member(name, "confluent", server.bootstrap, "g", "t", **options)

    run_group_scenario(server, member, topic="t", group="g")
