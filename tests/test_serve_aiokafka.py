"""aiokafka consumers (eager range) against `groupspec serve` on loopback."""

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


def test_aiokafka_group(server):
    def member(name: str):
        return python_member(name, "aiokafka", server.bootstrap, "g", "t", assignor="range")

    run_group_scenario(server, member, topic="t", group="g")
