"""`groupspec probe`: scripted exchanges, one protocol rule each, recorded and validated.

groupspec's own server passes every probe; librdkafka's mock coordinator is pinned on the one
finding a probe isolates from the others (docs/oracle-librdkafka-mock.md): OffsetFetch with
`topics: null` answers null instead of every committed offset."""

from __future__ import annotations

import importlib.util

import pytest

from groupspec.cli.main import main
from groupspec.record.workload.probes import PROBES


def test_groupspec_serve_passes_every_probe(tmp_path, capsys):
    assert main(["probe", "--target", "serve", "--trace-dir", str(tmp_path), "--validate"]) == 0
    out = capsys.readouterr().out
    assert out.count("  pass") == len(PROBES)
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == sorted(
        f"probe-{name}.jsonl" for name in PROBES
    )


@pytest.mark.skipif(
    importlib.util.find_spec("confluent_kafka") is None, reason="needs confluent-kafka"
)
def test_the_mock_cluster_answers_offset_fetch_all_with_null(tmp_path, capsys):
    argv = ["probe", "--target", "mock", "--probe", "offset-fetch-all", "--validate"]
    assert main([*argv, "--trace-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "OffsetFetch: the response is not one the specification allows here" in out
    assert "'topics': None" in out


def test_a_target_that_is_not_a_broker_is_bad_input(tmp_path, capsys):
    assert main(["probe", "--target", "127.0.0.1:1", "--trace-dir", str(tmp_path)]) == 2
    assert "target" in capsys.readouterr().err
