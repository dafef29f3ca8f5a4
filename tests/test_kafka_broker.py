"""Apache Kafka's own broker (record/kafka, `groupspec kafka`, docs/kafka.md): the pinned
releases and their cache, the group settings a broker starts with and a trace header states,
starting, readiness and stopping."""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import stat
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.protocol.consumer.group import OffsetFetchRequest, OffsetFetchResponse
from kafka.protocol.metadata.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)

from groupspec.cli.bench_serve_command import parse_target
from groupspec.cli.main import main
from groupspec.record.kafka import broker as broker_module
from groupspec.record.kafka.broker import BrokerStartError, KafkaBroker, cluster_id
from groupspec.record.kafka.class_archive import ClassArchive, archive_path
from groupspec.record.kafka.install import (
    CACHE_VARIABLE,
    KafkaSetupError,
    install,
    installed,
    java_executable,
    pinned_release,
    pinned_releases,
    pom_text,
)
from groupspec.record.kafka.settings import (
    BY_NAME,
    ORACLE_PROFILE,
    broker_properties,
    group_settings,
    header_settings,
)
from groupspec.record.workload.targets import (
    KAFKA_TARGETS,
    SERVE_INITIAL_REBALANCE_DELAY_MS,
    SERVE_MIN_SESSION_TIMEOUT_MS,
    KafkaTarget,
    make_target,
)
from groupspec.spec.config import KAFKA_3X, KAFKA_4X, CoordinatorConfig
from groupspec.wire.request_connection import RequestConnection

# A bound for a hung child process, not a timing check: a broker stops in a few seconds.
HANG_S = 300

# -- the pinned releases and their cache ------------------------------------------------------


def test_the_pom_pins_a_4x_and_a_39_release_and_targets_name_both():
    releases = pinned_releases()
    assert set(releases) == {"4.x", "3.9"}
    assert releases["4.x"].startswith("4.") and releases["3.9"].startswith("3.9.")
    assert KAFKA_TARGETS == {"kafka": "4.x", "kafka-3.9": "3.9"}
    assert parse_target("kafka") == "kafka" and parse_target("kafka-3.9") == "kafka-3.9"


def test_a_release_cached_from_another_pom_is_not_installed(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path))
    folder = tmp_path / pinned_release("4.x")
    (folder / "libs").mkdir(parents=True)
    assert installed("4.x") is None
    (folder / "pom.xml").write_bytes(b"<project/>")
    assert installed("4.x") is None
    (folder / "pom.xml").write_bytes(pom_text())
    assert installed("4.x") == folder / "libs"


def _fake_mvn(folder: Path, body: str) -> None:
    """An `mvn` on PATH in `folder` that runs the shell `body` ($out: -DoutputDirectory)."""
    script = folder / "mvn"
    script.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in -DoutputDirectory=*) out="${a#*=}";; esac; done\n'
        f"{body}\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_a_release_is_resolved_once_into_its_folder(tmp_path, monkeypatch):
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    _fake_mvn(bin_dir, f'echo call >> {calls}; mkdir -p "$out"; echo jar > "$out/kafka.jar"')
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")  # this mvn first, then mkdir
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "cache"))
    heard: list[str] = []
    libs = install("3.9", heard.append)
    assert libs == tmp_path / "cache" / pinned_release("3.9") / "libs"
    assert [p.name for p in libs.iterdir()] == ["kafka.jar"]
    assert len(heard) == 1 and "resolving Apache Kafka" in heard[0]
    assert install("3.9", heard.append) == libs
    assert calls.read_text().split() == ["call"]  # the second install found it cached
    leftovers = {p.name for p in (tmp_path / "cache").iterdir()}
    assert leftovers == {pinned_release("3.9"), f"{pinned_release('3.9')}.lock"}


def test_a_failing_mvn_names_its_error_and_leaves_no_release(tmp_path, monkeypatch):
    _fake_mvn(tmp_path, 'echo "[INFO] working"; echo "[ERROR] Could not resolve kafka"; exit 1')
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "cache"))
    with pytest.raises(KafkaSetupError, match=r"exit 1\): \[ERROR\] Could not resolve kafka"):
        install("4.x")
    release = pinned_release("4.x")
    assert not (tmp_path / "cache" / release).exists()
    assert (tmp_path / "cache" / f"{release}.mvn.log").exists()  # named in the message
    assert not list((tmp_path / "cache").glob("*.partial-*"))


def test_without_mvn_an_uncached_release_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "cache"))
    assert main(["kafka", "--install", "--kafka-version", "3.9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no `mvn` on PATH" in err[0] and "apt-get install" in err[0]


def test_without_java_groupspec_kafka_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    assert main(["kafka"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no `java` on PATH" in err[0]


def test_cluster_ids_are_as_kafka_storage_makes_them():
    for _ in range(200):
        assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_-]{21}", cluster_id())


def test_the_first_broker_writes_the_class_archive_and_later_ones_map_it(tmp_path):
    archive = ClassArchive(archive_path(tmp_path, sys.executable))
    assert archive.use_options() == []
    (dump,) = [o for o in archive.broker_options() if o.startswith("-XX:ArchiveClassesAtExit=")]
    scratch = Path(dump.split("=", 1)[1])
    assert scratch.parent == tmp_path and scratch != archive.path
    scratch.write_bytes(b"classes")
    archive.keep(-9)  # killed: what it wrote may be cut short
    assert not scratch.exists() and not archive.path.exists()
    (dump,) = [o for o in archive.broker_options() if o.startswith("-XX:ArchiveClassesAtExit=")]
    Path(dump.split("=", 1)[1]).write_bytes(b"classes")
    archive.keep(143)  # stopped by SIGTERM after its shutdown hooks: complete
    assert archive.path.read_bytes() == b"classes"
    mapped = f"-XX:SharedArchiveFile={archive.path}"
    assert mapped in archive.broker_options() and mapped in archive.use_options()
    assert [p.name for p in tmp_path.iterdir()] == [archive.path.name]


def test_an_archive_is_named_after_the_jvm_that_wrote_it(tmp_path):
    other = tmp_path / "java"
    other.write_text("")
    assert archive_path(tmp_path, sys.executable) != archive_path(tmp_path, str(other))
    assert archive_path(tmp_path, sys.executable) == archive_path(tmp_path, sys.executable)


# -- the group settings -----------------------------------------------------------------------


def test_the_header_states_every_setting_the_oracle_reads_and_the_oracle_takes_them():
    settable = {f.name for f in fields(CoordinatorConfig)} - {"write_failures"}
    for line, profile in (("4.x", KAFKA_4X), ("3.9", KAFKA_3X)):
        header = header_settings(line, group_settings())
        assert set(header) == settable
        assert CoordinatorConfig(**header).kafka_version == profile
    assert set(ORACLE_PROFILE) == set(pinned_releases())


def test_the_defaults_are_serves_under_a_workload_and_kafkas_elsewhere():
    header = header_settings("4.x", group_settings())
    assert header["group_initial_rebalance_delay_ms"] == SERVE_INITIAL_REBALANCE_DELAY_MS
    assert header["group_min_session_timeout_ms"] == SERVE_MIN_SESSION_TIMEOUT_MS
    assert header["offsets_topic_num_partitions"] == 1
    kafka = CoordinatorConfig()
    for name in (
        "group_max_session_timeout_ms",
        "group_max_size",
        "offsets_retention_ms",
        "offsets_retention_check_interval_ms",
        "offset_metadata_max_bytes",
        "new_member_join_timeout_ms",
    ):
        assert header[name] == getattr(kafka, name), name


def test_retention_goes_to_the_broker_in_minutes():
    properties = broker_properties(group_settings({"offsets_retention_ms": 120_000}))
    assert properties["offsets.retention.minutes"] == "2"
    assert properties["group.initial.rebalance.delay.ms"] == "500"
    assert properties["node.id"] == "1"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"group_max_sise": 3}, "not a broker group setting"),
        ({"offsets_retention_ms": 90_000}, "whole number of minutes"),
        ({"group_max_size": 0}, "a positive integer"),
        ({"offsets_topic_num_partitions": 0}, "a positive integer"),
        ({"group_max_size": "3"}, "a positive integer"),
        ({"group_initial_rebalance_delay_ms": -1}, "a non-negative integer"),
        ({"new_member_join_timeout_ms": 1000}, "fixed at 300000"),
        ({"kafka_version": "3.x"}, "choose the Kafka line"),
        ({"write_failures": ()}, "not a broker group setting"),
        ({"group_min_session_timeout_ms": 1_800_001}, "exceeds group_max_session_timeout_ms"),
    ],
)
def test_a_setting_a_broker_cannot_take_is_refused(override, message):
    with pytest.raises(ValueError, match=message):
        group_settings(override)


def test_kafka_targets_start_their_line_with_the_settings_given():
    target = make_target("kafka")
    assert isinstance(target, KafkaTarget) and target.broker.line == "4.x"
    assert target.advertise_self and target.kind == "kafka"
    other = make_target("kafka-3.9", {"group_initial_rebalance_delay_ms": 0})
    assert isinstance(other, KafkaTarget) and other.broker.line == "3.9"
    assert other.coordinator["group_initial_rebalance_delay_ms"] == 0
    assert other.coordinator["kafka_version"] == "3.x"
    with pytest.raises(ValueError):
        make_target("kafka-2.8")


def test_a_bad_setting_for_a_kafka_target_exits_2_before_anything_starts(tmp_path, capsys):
    argv = ["workload", "--target", "kafka", "--trace-dir", str(tmp_path / "t")]
    assert main([*argv, "--coordinator-setting", "group_max_sise=3"]) == 2
    assert "not a broker group setting" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()


def test_a_taken_port_is_refused_before_the_broker_starts(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["kafka", "--port", str(port)]) == 2
    assert f"something already listens on 127.0.0.1:{port}" in capsys.readouterr().err


# -- a running broker -------------------------------------------------------------------------


def test_the_broker_runs_with_the_settings_its_header_states(kafka_broker):
    properties = broker_properties(kafka_broker.settings)
    node = str(kafka_broker.settings["broker_id"])
    admin = KafkaAdminClient(bootstrap_servers=kafka_broker.bootstrap)
    try:
        wanted = dict.fromkeys(p for p in properties if p != "node.id")
        resource = ConfigResource(ConfigResourceType.BROKER, node, configs=wanted)
        described = admin.describe_configs([resource], config_filter="all")["broker"][node]
    finally:
        admin.close()
    for name, value in properties.items():
        if name != "node.id":  # the resource's name: answered at all, it is the node's id
            assert described[name]["value"] == value, name
            assert described[name]["config_source"] == "STATIC_BROKER_CONFIG", name
    header = kafka_broker.header_settings()
    assert header["kafka_version"] == ORACLE_PROFILE[kafka_broker.line]
    assert {name: header[name] for name in BY_NAME} == kafka_broker.settings


# The class each line's log names as its group coordinator when it starts: the Java coordinator
# on 4.x; on 3.9 with the new coordinator left off, the Scala GroupCoordinator (docs/kafka.md).
COORDINATOR_CLASS = {
    "4.x": "org.apache.kafka.coordinator.group.GroupCoordinatorService",
    "3.9": "kafka.coordinator.group.GroupCoordinator",
}


def test_each_line_runs_the_coordinator_its_oracle_profile_follows(kafka_broker):
    log = kafka_broker.log_path.read_text(errors="replace")
    started = {name for name in COORDINATOR_CLASS.values() if f" INFO {name} - " in log}
    assert started == {COORDINATOR_CLASS[kafka_broker.line]}
    assert (
        kafka_broker.header_settings()["kafka_version"]
        == {"4.x": "4.x", "3.9": "3.x"}[kafka_broker.line]
    )


def test_once_started_a_new_group_finds_its_coordinator_loaded(kafka_broker):
    """Readiness means a group's first FindCoordinator and OffsetFetch are answered without
    error: no COORDINATOR_NOT_AVAILABLE or COORDINATOR_LOAD_IN_PROGRESS in a trace's start."""

    async def first_answers() -> tuple[int, int]:
        connection = await RequestConnection.open(kafka_broker.address, "test")
        try:
            find = FindCoordinatorRequest(key="a-new-group", key_type=0)
            found = await connection.call(find, FindCoordinatorResponse, 1)
            fetch = OffsetFetchRequest(group_id="a-new-group", topics=None)
            fetched = await connection.call(fetch, OffsetFetchResponse, 2)
        finally:
            connection.close()
        assert found.node_id == kafka_broker.settings["broker_id"]
        return found.error_code, fetched.error_code

    assert asyncio.run(first_answers()) == (0, 0)


def test_groupspec_kafka_serves_clients_and_stops_cleanly_on_ctrl_c():
    command = [sys.executable, "-m", "groupspec.cli.main", "kafka", "--kafka-version", "3.9"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert f"Apache Kafka {pinned_release('3.9')} " in first and "listening on" in first, first
        bootstrap = first.split()[-1]
        details = "".join(process.stdout.readline() for _ in range(3))
        found = re.search(r"data directory (\S+) \(removed at exit\)", details)
        assert found, details
        data_dir = Path(found.group(1))
        assert (data_dir / "broker.log").exists()
        assert "kafka_version=3.x" in details
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        try:
            admin.create_topics([NewTopic("t", num_partitions=2, replication_factor=1)])
            assert "t" in admin.list_topics()
        finally:
            admin.close()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=HANG_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert err.strip().splitlines()[-1] == "groupspec kafka: stopping"
    assert not data_dir.exists()
    libs = installed("3.9")
    assert libs is not None
    # A clean stop leaves the release's class archive (written now, or by an earlier broker).
    assert archive_path(libs.parent, java_executable()).exists()
    host, port = bootstrap.rsplit(":", 1)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((host, int(port))).close()


def _bound_not_listening() -> socket.socket:
    """A loopback port held by a socket that is bound but refuses connections: a broker cannot
    bind it, and nothing answers there."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


def test_a_broker_whose_port_is_taken_names_its_log_and_keeps_it():
    with _bound_not_listening() as taken:
        broker = KafkaBroker("3.9", port=taken.getsockname()[1])
        with pytest.raises(BrokerStartError, match=r"did not become ready: .* see \S+broker.log"):
            broker.start()
    assert not broker.running()
    assert "Address already in use" in broker.log_path.read_text(errors="replace")
    data_dir = broker.log_path.parent
    broker.stop()
    assert not data_dir.exists()


def test_a_port_taken_before_the_broker_binds_it_is_replaced(monkeypatch):
    """free_port's answer can be taken by someone else before the broker binds it: the start is
    tried again with other ports."""
    with _bound_not_listening() as taken:
        ports = iter([taken.getsockname()[1]])
        free_port = broker_module.free_port
        monkeypatch.setattr(broker_module, "free_port", lambda: next(ports, None) or free_port())
        broker = KafkaBroker("3.9")
        try:
            broker.start()
            assert broker.port != taken.getsockname()[1]
            log = broker.log_path.read_text(errors="replace")
            assert "Address already in use" in log
        finally:
            broker.stop()
