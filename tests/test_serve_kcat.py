"""kcat (Debian's, librdkafka 2.0) balanced consumers against `groupspec serve` on loopback."""

from __future__ import annotations

import shutil

import pytest
from serve_scenarios import run_group_scenario
from serve_support import ServerThread, serve_config

from groupspec.record.workload.members import kcat_member, parse_kcat_line

pytestmark = pytest.mark.skipif(
    shutil.which("kcat") is None, reason="kcat is not installed (make test installs it)"
)


@pytest.fixture
def server(tmp_path):
    thread = ServerThread(serve_config(data_dir=tmp_path, topics={"t": 6})).start()
    yield thread
    thread.stop()


def test_kcat_output_parsing():
    line = "% Group g rebalanced (memberid rdkafka-1): assigned: t [0], t [4]"
    assert parse_kcat_line(line) == {"ev": "assigned", "partitions": [0, 4]}
    assert parse_kcat_line("% Group g rebalanced (memberid x): revoked: t [0]") == {
        "ev": "assigned",
        "partitions": [],
    }
    assert parse_kcat_line("REC 3 7 a b") == {"ev": "record", "p": 3, "o": 7, "v": "a b"}


def test_kcat_group(server):
    run_group_scenario(
        server,
        lambda name: kcat_member(name, server.bootstrap, "g", "t"),
        topic="t",
        group="g",
    )
