"""`groupspec record` as a command: start, record, stop on SIGTERM; clear errors for an
upstream that is not a broker and for bad arguments."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading

import pytest
from kafka.protocol.consumer.group import HeartbeatRequest
from serve_support import Raw, ServerThread, serve_config

from groupspec.cli.main import main
from groupspec.cli.record_options import coordinator_settings
from groupspec.record.workload.targets import free_port
from groupspec.wire.trace_format import CLOSE, REQUEST, RESPONSE, TraceReading, read_trace


@pytest.fixture
def server():
    thread = ServerThread(serve_config(topics={"t": 1})).start()
    yield thread
    thread.stop()


def test_record_runs_until_sigterm_and_closes_open_connections_in_the_trace(server, tmp_path):
    path = tmp_path / "trace.jsonl"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "groupspec.cli.main",
            "record",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            server.bootstrap,
            "--out",
            str(path),
            "--coordinator-setting",
            "group_initial_rebalance_delay_ms=500",
            "--source",
            "test serve",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline()
    assert "listening on 127.0.0.1:" in line, line + process.stderr.read()
    port = int(line.split("listening on 127.0.0.1:")[1].split(",")[0])
    raw = Raw(port)
    raw.send(HeartbeatRequest(group_id="g", generation_id=1, member_id="m"), 2, 41)
    assert raw.receive() is not None
    process.send_signal(signal.SIGTERM)  # the connection is still open
    out, err = process.communicate(timeout=30)
    raw.close()
    assert process.returncode == 0, err
    assert "3 events from 1 connections" in out
    assert "Heartbeat        requests     1  responses     1" in out
    reading = TraceReading()
    events = list(read_trace(path, reading))
    assert [(e.api, e.direction) for e in events] == [
        ("Heartbeat", REQUEST),
        ("Heartbeat", RESPONSE),
        ("", CLOSE),
    ]
    assert reading.header.source == "test serve"
    assert reading.header.coordinator == {"group_initial_rebalance_delay_ms": 500}


def record_from(port: int, out) -> int:
    """`groupspec record` in process, forwarding to 127.0.0.1:`port` (returns at once when
    the upstream is not a broker)."""
    return main(
        ["record", "--listen", "127.0.0.1:0", "--upstream", f"127.0.0.1:{port}", "--out", str(out)]
    )


def test_nothing_listening_upstream_is_a_clear_error(tmp_path, capsys):
    port = free_port()
    code = record_from(port, tmp_path / "t")
    assert code == 2
    assert f"nothing listening at 127.0.0.1:{port}" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()


def test_an_upstream_that_is_not_kafka_is_a_clear_error(tmp_path, capsys):
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def answer_http() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(1024)
            connection.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

    thread = threading.Thread(target=answer_http, daemon=True)
    thread.start()
    code = record_from(port, tmp_path / "t")
    thread.join(10)
    listener.close()
    assert code == 2
    assert "not the Kafka protocol" in capsys.readouterr().err


@pytest.mark.parametrize(
    "arguments",
    [
        ["--listen", "nowhere", "--upstream", "127.0.0.1:9092"],
        ["--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:99999"],
        ["--listen", "0.0.0.0:0", "--upstream", "127.0.0.1:9092", "--advertise-self"],
        ["--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:9092", "--coordinator-setting", "x"],
    ],
)
def test_bad_arguments_exit_2(arguments, tmp_path, capsys):
    assert main(["record", *arguments, "--out", str(tmp_path / "t")]) == 2
    assert "groupspec record:" in capsys.readouterr().err


def test_coordinator_settings_are_typed():
    assert coordinator_settings(["a=1", "b=2.5", "c=true", "d=text", "e="]) == {
        "a": 1,
        "b": 2.5,
        "c": True,
        "d": "text",
        "e": "",
    }
    with pytest.raises(ValueError):
        coordinator_settings(["1a=2"])
