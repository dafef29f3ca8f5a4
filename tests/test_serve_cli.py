"""`groupspec serve` and `groupspec bench serve` as commands."""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys

import pytest

from groupspec.cli.main import main
from groupspec.impl.server import parse_topics


def start_serve(*options: str) -> tuple[subprocess.Popen, int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "groupspec.cli.main", "serve", "--port", "0", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline()
    assert "listening on 127.0.0.1:" in line, line
    return process, int(line.rsplit(":", 1)[1])


def api_versions_round_trip(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        # ApiVersions v0: api key 18, version 0, correlation id 5, client id "t".
        body = struct.pack(">hhih", 18, 0, 5, 1) + b"t"
        sock.sendall(struct.pack(">i", len(body)) + body)
        length = struct.unpack(">i", sock.recv(4))[0]
        assert length > 0


@pytest.mark.parametrize(("level", "expected"), [("INFO", 0), ("DEBUG", 3)])
def test_serve_logs_one_line_per_connection_at_debug_only(level, expected):
    process, port = start_serve("--log-level", level, "--topics", "t:2")
    try:
        for _ in range(3):
            api_versions_round_trip(port)
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0
    assert sum(": connection from " in line for line in stderr.splitlines()) == expected


def test_serve_rejects_a_bad_topics_spec(capsys):
    assert main(["serve", "--topics", "t:zero"]) == 2
    assert "NAME:PARTITIONS" in capsys.readouterr().err


def test_parse_topics():
    assert parse_topics("t:6, u:3") == {"t": 6, "u": 3}
    assert parse_topics("") == {}
    for bad in ("t", "t:0", ":3", "t:-1"):
        with pytest.raises(ValueError):
            parse_topics(bad)


def test_bench_serve_reports_its_figures_and_the_targets(tmp_path, capsys):
    """Our server and librdkafka's mock cluster under the same load, side by side."""
    pytest.importorskip("confluent_kafka")
    path = tmp_path / "serve.json"
    code = main(
        [
            "bench",
            "serve",
            "--groups",
            "2",
            "--members",
            "2",
            "--duration",
            "0.5",
            "--target",
            "mock",
            "--json",
            str(path),
        ]
    )
    assert code == 0
    ours, theirs, ratios = capsys.readouterr().out.splitlines()
    assert ours.startswith("serve: groupspec serve: 2 groups × 2 members") and "requests/s" in ours
    assert theirs.startswith("serve: librdkafka ") and "mock cluster at 127.0.0.1:" in theirs
    assert " ÷ groupspec serve: formation of " in ratios and ", requests/s " in ratios
    figures = json.loads(path.read_text())
    assert figures["bench"] == "serve"
    assert figures["groups"] == 2 and figures["members_per_group"] == 2
    for name in (
        "requests",
        "heartbeats",
        "commits",
        "requests_per_s",
        "p50_ms",
        "p99_ms",
        "errors",
        "formation_s",
    ):
        assert name in figures and name in figures["target"]
    for report in (figures, figures["target"]):
        assert report["requests"] == report["heartbeats"] + report["commits"] > 0
        assert report["errors"] == report["stalled"] == 0
        assert report["broker_cpu_us_per_request"] >= 0  # both are visible on Linux
    expected = figures["target"]["requests_per_s"] / figures["requests_per_s"]
    assert figures["ratios"]["requests_per_s"] == pytest.approx(expected, rel=0.01)


def test_bench_serve_rejects_bad_sizes(capsys):
    assert main(["bench", "serve", "--groups", "0"]) == 2


def test_serve_advertises_the_port_it_is_told(tmp_path):
    from kafka.protocol.metadata.find_coordinator import (
        FindCoordinatorRequest,
        FindCoordinatorResponse,
    )
    from kafka.protocol.metadata.metadata import MetadataRequest, MetadataResponse

    process, port = start_serve("--advertised-port", "19093", "--topics", "t:1")
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
            for correlation_id, (request, response_class, version) in enumerate(
                [
                    (MetadataRequest(topics=None), MetadataResponse, 1),
                    (FindCoordinatorRequest(key="g", key_type=0), FindCoordinatorResponse, 1),
                ]
            ):
                request.with_header(correlation_id=correlation_id, client_id="t")
                sock.sendall(bytes(request.encode(version=version, header=True, framed=True)))
                length = struct.unpack(">i", sock.recv(4))[0]
                frame = b""
                while len(frame) < length:
                    frame += sock.recv(length - len(frame))
                answer = response_class.decode(frame, version=version, header=True)
                if response_class is MetadataResponse:
                    assert [(b.host, b.port) for b in answer.brokers] == [("127.0.0.1", 19093)]
                else:
                    assert (answer.host, answer.port) == ("127.0.0.1", 19093)
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert main(["serve", "--advertised-port", "70000"]) == 2


def test_serve_takes_coordinator_settings_in_the_specifications_names():
    from groupspec.cli.main import build_parser
    from groupspec.cli.serve_command import coordinator_config

    argv = ["serve", "--min-session-timeout-ms", "700", "--coordinator-setting", "group_max_size=2"]
    config = coordinator_config(build_parser().parse_args(argv))
    assert (config.group_max_size, config.group_min_session_timeout_ms) == (2, 700)
    overridden = [*argv, "--coordinator-setting", "group_min_session_timeout_ms=500"]
    assert (
        coordinator_config(build_parser().parse_args(overridden)).group_min_session_timeout_ms
        == 500
    )


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("group_max_sise=2", "group_max_sise: not a coordinator setting"),
        ("group_max_size=0", "group_max_size must be a positive integer"),
        ("group_max_size", "expected KEY=VALUE"),
    ],
)
def test_serve_refuses_a_bad_coordinator_setting(setting, message, capsys):
    assert main(["serve", "--coordinator-setting", setting]) == 2
    err = capsys.readouterr().err
    assert err.startswith("groupspec serve: ") and message in err
