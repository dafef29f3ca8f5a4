"""`groupspec bench serve --target`: the same load on another broker, a bounded formation, and
what librdkafka's mock cluster does differently from Kafka when groups form (docs/serve.md).

The mock-cluster tests share one mock and run their groups concurrently, so its fixed 3 s
initial rebalance delay is paid once. The whole command against the mock is run by
tests/test_serve_cli.py (`test_bench_serve_reports_its_figures_and_the_targets`).
"""

from __future__ import annotations

import asyncio
import os
import socket
from types import SimpleNamespace
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.protocol.consumer.group import (
    JoinGroupRequest,
    JoinGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from serve_support import ServerThread, join_request, serve_config

from groupspec.bench import group_formation
from groupspec.bench.broker_cpu import process_cpu, threads_cpu
from groupspec.bench.formation_progress import FormationProgress
from groupspec.bench.group_formation import GroupMember, SyncOrder
from groupspec.bench.load_protocol import (
    COORDINATOR_RETRIABLE,
    MEMBER_ID_REQUIRED,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID,
    FormationError,
    error_name,
)
from groupspec.bench.serve_load import run_load
from groupspec.cli.bench_serve_command import parse_target
from groupspec.cli.main import main
from groupspec.impl.config import CoordinatorConfig
from groupspec.wire.address import Address
from groupspec.wire.request_connection import RequestConnection

# -- the option -------------------------------------------------------------------------------


def test_target_is_mock_or_host_port():
    assert parse_target("mock") == "mock"
    assert parse_target("127.0.0.1:9092") == Address("127.0.0.1", 9092)
    assert parse_target("[::1]:19092") == Address("::1", 19092)


@pytest.mark.parametrize("bad", ["mok", "localhost", "host:0", "host:99999", ":9092", "host:x"])
def test_a_bad_target_is_a_one_line_usage_error(bad, capsys):
    assert main(["bench", "serve", "--target", bad]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--target" in err and "HOST:PORT" in err and "mock" in err


@pytest.mark.parametrize("option", ["--formation-timeout", "--duration"])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_durations_must_be_finite_and_positive(option, value, capsys):
    assert main(["bench", "serve", option, value]) == 2
    assert f"a finite {option} > 0" in capsys.readouterr().err


def test_a_json_file_in_a_missing_directory_is_refused_before_any_run(tmp_path, capsys):
    path = tmp_path / "no" / "figures.json"
    assert main(["bench", "serve", "--json", str(path)]) == 2
    assert "does not exist" in capsys.readouterr().err


# -- a target that never answers --------------------------------------------------------------


def test_a_target_that_accepts_and_never_answers_ends_with_one_clear_line(capsys):
    """The kernel accepts connections to a listening socket nobody reads: no answer, ever."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        port = silent.getsockname()[1]
        argv = ["bench", "serve", "--target", f"127.0.0.1:{port}", "--formation-timeout", "0.3"]
        code = main([*argv, "--groups", "1", "--members", "1", "--duration", "0.1"])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert f"target 127.0.0.1:{port}" in lines[0]
    assert "did not complete within 0.3 s" in lines[0]
    assert lines[0].endswith(
        "did not complete within 0.3 s: 0 of 1 members formed; "
        "the setup waits for an ApiVersions v0 response"
    )


def test_a_target_with_nothing_listening_names_the_address(capsys):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = main(["bench", "serve", "--target", f"127.0.0.1:{port}", "--groups", "1"])
    assert code == 1
    assert f"nothing listening at 127.0.0.1:{port}" in capsys.readouterr().err


def test_groups_that_never_form_end_with_what_each_member_waits_for():
    """A coordinator whose initial rebalance delay outlasts the formation timeout."""
    config = serve_config(coordinator=CoordinatorConfig(group_initial_rebalance_delay_ms=600_000))
    server = ServerThread(config).start()
    try:
        with pytest.raises(FormationError) as raised:
            asyncio.run(run_load(Address("127.0.0.1", server.port), 1, 2, 0.1, 1.0))
    finally:
        server.stop()
    assert str(raised.value) == (
        "group formation did not complete within 1 s: "
        "0 of 2 members formed; 2 waiting for a JoinGroup v5 response"
    )


def test_the_timeout_summary_says_what_each_member_waits_for():
    progress = FormationProgress()
    progress.waiting("bench-0/0", "a JoinGroup v5 response")
    progress.waiting("bench-0/1", "a JoinGroup v5 response")
    progress.answered("bench-0/0", "JoinGroup v5 NOT_COORDINATOR (16)")
    progress.waiting("bench-0/2", "a SyncGroup v3 response")
    progress.done("bench-0/2")
    progress.waiting("setup", "a Metadata v4 response for topic bench")
    assert progress.summary(4) == (
        "1 of 4 members formed; the setup waits for a Metadata v4 response for topic bench; "
        "2 waiting for a JoinGroup v5 response; "
        "bench-0/0's last answer: JoinGroup v5 NOT_COORDINATOR (16)"
    )


def test_broker_cpu_clocks_read_this_machine_or_say_none():
    own = process_cpu(os.getpid())()
    assert own is not None and own > 0
    assert threads_cpu("no-such-thread")() is None
    assert process_cpu(1 << 30)() is None  # above any pid the kernel hands out


# -- each formation answer judged against Kafka's -------------------------------------------


class ScriptedConnection:
    """Answers each request with the next scripted response; records what was sent."""

    def __init__(self, *responses: Any) -> None:
        self.responses = list(responses)
        self.sent: list[Any] = []

    def send(self, request: Any, version: int) -> int:
        self.sent.append(request)
        return len(self.sent)

    async def receive(self, response_class: Any, version: int, correlation_id: int) -> Any:
        return self.responses.pop(0)

    async def call(self, request: Any, response_class: Any, version: int) -> Any:
        return await self.receive(response_class, version, self.send(request, version))


def joined(code: int = 0, member_id: str = "m-1", leader: str = "m-0") -> SimpleNamespace:
    return SimpleNamespace(
        error_code=code, member_id=member_id, generation_id=1, leader=leader, members=[]
    )


def member(order: SyncOrder | None = None) -> GroupMember:
    return GroupMember("bench-0", 1, 4, order or SyncOrder(), FormationProgress())


def form(connection: ScriptedConnection, order: SyncOrder | None = None) -> GroupMember:
    one = member(order)
    asyncio.run(one.join(connection))  # type: ignore[arg-type]
    return one


def test_a_member_does_the_member_id_required_round_then_syncs():
    connection = ScriptedConnection(
        joined(MEMBER_ID_REQUIRED, member_id="m-1"), joined(), SimpleNamespace(error_code=0)
    )
    one = form(connection)
    first, second, sync = connection.sent
    assert isinstance(first, JoinGroupRequest) and first.member_id == ""
    assert second.member_id == "m-1"
    assert isinstance(sync, SyncGroupRequest) and sync.assignments == []
    assert (one.member_id, one.generation) == ("m-1", 1)


def test_a_follower_syncing_answered_invalid_request_is_a_deviation():
    """What librdkafka's mock answers a follower that syncs after its leader."""
    connection = ScriptedConnection(joined(), SimpleNamespace(error_code=42))
    with pytest.raises(FormationError) as raised:
        form(connection)
    message = str(raised.value)
    assert message.startswith("SyncGroup v3 of bench-0/1 (a follower, generation 1) answered ")
    assert "INVALID_REQUEST (42)" in message
    assert "Kafka answers NO_ERROR (0)" in message and "REBALANCE_IN_PROGRESS (27)" in message


def test_a_leader_assigns_every_partition_once_and_syncs_after_its_follower():
    order = SyncOrder()
    leader_joined = SimpleNamespace(
        error_code=0,
        member_id="m-0",
        generation_id=1,
        leader="m-0",
        members=[SimpleNamespace(member_id="m-1"), SimpleNamespace(member_id="m-0")],
    )
    leader = ScriptedConnection(leader_joined, SimpleNamespace(error_code=0))
    follower = ScriptedConnection(joined(), SimpleNamespace(error_code=0))
    sent: list[str] = []

    async def both() -> None:
        async def track(name: str, connection: ScriptedConnection) -> None:
            original = connection.send

            def send(request: Any, version: int) -> int:
                if isinstance(request, SyncGroupRequest):
                    sent.append(name)
                return original(request, version)

            connection.send = send  # type: ignore[method-assign]
            await GroupMember("bench-0", 0, 4, order, FormationProgress()).join(connection)  # type: ignore[arg-type]

        await asyncio.gather(track("leader", leader), track("follower", follower))

    asyncio.run(both())
    assert sent == ["follower", "leader"]
    from groupspec.spec.consumer_protocol import decode_assignment

    sync = leader.sent[-1]
    owned = [[tp.partition for tp in decode_assignment(a.assignment)[0]] for a in sync.assignments]
    assert sorted(a.member_id for a in sync.assignments) == ["m-0", "m-1"]
    assert sorted(p for partitions in owned for p in partitions) == [0, 1, 2, 3]


RETRIED_JOIN = {UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS, *COORDINATOR_RETRIABLE}


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=-1, max_value=120).filter(lambda c: c != 0))
def test_a_join_error_is_retried_as_kafka_clients_do_or_named_as_a_deviation(code):
    """Any JoinGroup error: retried if a Kafka client retries it, else one line naming it."""
    connection = ScriptedConnection(joined(code), joined(), SimpleNamespace(error_code=0))
    with mock.patch.object(group_formation, "RETRY_BACKOFF_S", 0):
        if code in RETRIED_JOIN or code == MEMBER_ID_REQUIRED:
            form(connection)
            assert len(connection.sent) == 3
        else:
            with pytest.raises(FormationError) as raised:
                form(connection)
            assert f"answered {error_name(code)}" in str(raised.value)
            assert "\n" not in str(raised.value)


# -- librdkafka's mock cluster ----------------------------------------------------------------


async def _group_of_two(address: Address, group: str) -> tuple[list[RequestConnection], Any]:
    """Two members join `group`; their connections and the first JoinGroup responses."""
    connections = [await RequestConnection.open(address, f"t-{i}") for i in range(2)]

    async def join(connection: RequestConnection) -> Any:
        answer = await connection.call(join_request(group), JoinGroupResponse, 5)
        if answer.error_code == MEMBER_ID_REQUIRED:  # Kafka's round; the mock skips it
            answer = await connection.call(
                join_request(group, answer.member_id), JoinGroupResponse, 5
            )
        return answer

    return connections, await asyncio.gather(*(join(c) for c in connections))


def _sync(group: str, answer: Any, assignments: list[tuple[str, bytes]]) -> SyncGroupRequest:
    return SyncGroupRequest(
        group_id=group,
        generation_id=answer.generation_id,
        member_id=answer.member_id,
        group_instance_id=None,
        assignments=[
            SyncGroupRequest.SyncGroupRequestAssignment(member_id=m, assignment=a)
            for m, a in assignments
        ],
    )


async def _follower_syncs_after_leader(address: Address) -> int:
    """The error code of a follower's SyncGroup sent once its leader's was answered."""
    connections, answers = await _group_of_two(address, "late-follower")
    leader = next(i for i, a in enumerate(answers) if a.leader == a.member_id)
    everyone = [(a.member_id, b"") for a in answers]
    await connections[leader].call(
        _sync("late-follower", answers[leader], everyone), SyncGroupResponse, 3
    )
    follower = 1 - leader
    late = await connections[follower].call(
        _sync("late-follower", answers[follower], []), SyncGroupResponse, 3
    )
    for connection in connections:
        connection.close()
    return int(late.error_code)


async def _leader_syncs_without_assignments(address: Address) -> int:
    """The error code of a leader's SyncGroup that assigns nothing (Kafka stores empty
    assignments for members the leader leaves out and answers NONE)."""
    connections, answers = await _group_of_two(address, "empty-leader")
    leader = next(i for i, a in enumerate(answers) if a.leader == a.member_id)
    follower = 1 - leader
    connections[follower].send(_sync("empty-leader", answers[follower], []), 3)
    response = await connections[leader].call(
        _sync("empty-leader", answers[leader], []), SyncGroupResponse, 3
    )
    for connection in connections:
        connection.close()
    return int(response.error_code)


async def _follower_syncs_with_assignments(address: Address) -> int:
    """The error code of a follower's SyncGroup that carries assignments (Kafka ignores a
    follower's assignments and answers it with the one its leader sends)."""
    connections, answers = await _group_of_two(address, "full-follower")
    leader = next(i for i, a in enumerate(answers) if a.leader == a.member_id)
    follower = 1 - leader
    everyone = [(a.member_id, b"") for a in answers]
    parked = connections[follower].send(_sync("full-follower", answers[follower], everyone), 3)
    await connections[leader].call(
        _sync("full-follower", answers[leader], everyone), SyncGroupResponse, 3
    )
    response = await connections[follower].receive(SyncGroupResponse, 3, parked)
    for connection in connections:
        connection.close()
    return int(response.error_code)


@pytest.fixture(scope="module")
def mock_runs() -> dict[str, Any]:
    """One mock cluster: the bench's load and the probes, concurrently."""
    pytest.importorskip("confluent_kafka")
    from groupspec.record.workload.targets import MockTarget

    target = MockTarget()
    target.open()

    async def everything() -> list[Any]:
        return await asyncio.gather(
            run_load(target.upstream, 2, 3, 0.3, 30.0),
            _follower_syncs_after_leader(target.upstream),
            _leader_syncs_without_assignments(target.upstream),
            _follower_syncs_with_assignments(target.upstream),
            return_exceptions=True,
        )

    try:
        load, late, leader_empty, follower_full = asyncio.run(everything())
    finally:
        target.close()
    return {
        "load": load,
        "late follower": late,
        "leader without assignments": leader_empty,
        "follower with assignments": follower_full,
    }


def test_the_load_forms_and_runs_on_the_mock_cluster(mock_runs):
    report = mock_runs["load"]
    if isinstance(report, BaseException):
        raise report
    assert report.requests > 0 and report.requests == report.heartbeats + report.commits
    assert (report.errors, report.rejoins, report.stalled) == (0, 0, 0)


@pytest.mark.xfail(
    strict=True,
    reason="librdkafka's mock answers a follower syncing after its leader INVALID_REQUEST (42)",
)
def test_mock_answers_a_follower_syncing_after_its_leader_as_kafka_does(mock_runs):
    assert mock_runs["late follower"] == 0


@pytest.mark.xfail(
    strict=True,
    reason="librdkafka's mock answers a leader's SyncGroup without assignments INVALID_PARTITIONS",
)
def test_mock_accepts_a_leader_sync_without_assignments_as_kafka_does(mock_runs):
    assert mock_runs["leader without assignments"] == 0


@pytest.mark.xfail(
    strict=True,
    reason="librdkafka's mock answers a follower's SyncGroup with assignments NOT_LEADER (6)",
)
def test_mock_ignores_a_followers_assignments_as_kafka_does(mock_runs):
    assert mock_runs["follower with assignments"] == 0
