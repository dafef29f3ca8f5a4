"""--advertise-self against librdkafka's mock cluster, which advertises itself: a
confluent-kafka consumer bootstrapped at the recorder stays behind it (its group traffic is in
the trace), and the trace keeps the mock's own answers."""

from __future__ import annotations

from confluent_kafka import Consumer, Producer

from groupspec.record.proxy import ProxyConfig
from groupspec.record.proxy_thread import RecorderThread
from groupspec.record.workload.members import wait_until
from groupspec.record.workload.targets import MockTarget
from groupspec.wire.address import Address
from groupspec.wire.trace_format import REQUEST, RESPONSE, TraceHeader, read_trace


def test_a_librdkafka_consumer_of_the_mock_cluster_is_recorded_through_advertise_self(tmp_path):
    mock = MockTarget()
    mock.open()
    path = tmp_path / "mock.jsonl"
    config = ProxyConfig(Address("127.0.0.1", 0), mock.upstream, advertise_self=True)
    try:
        with RecorderThread(config, path, TraceHeader(mock.describe())) as recorder:
            producer = Producer({"bootstrap.servers": recorder.address})
            for i in range(8):
                producer.produce("t", value=b"%d" % i, partition=i % 4)
            assert producer.flush(30) == 0
            consumer = Consumer(
                {
                    "bootstrap.servers": recorder.address,
                    "group.id": "g",
                    "auto.offset.reset": "earliest",
                    "enable.auto.commit": False,
                    "session.timeout.ms": 6000,
                    "heartbeat.interval.ms": 500,
                }
            )
            consumer.subscribe(["t"])
            read = []

            def read_all() -> bool:
                message = consumer.poll(0.2)
                if message is not None and message.error() is None:
                    read.append(message.value())
                return len(read) == 8

            wait_until(read_all, "the 8 records")
            consumer.commit(asynchronous=False)
            consumer.close()
    finally:
        mock.close()
    events = list(read_trace(path))
    seen = {(e.api, e.direction) for e in events}
    for api in ("FindCoordinator", "JoinGroup", "SyncGroup", "OffsetCommit", "LeaveGroup"):
        assert (api, REQUEST) in seen and (api, RESPONSE) in seen, api
    # The trace keeps what the mock said: its own address, its pointer-like member ids.
    coordinator = next(e for e in events if e.api == "FindCoordinator" and e.direction == RESPONSE)
    answer = coordinator.body.get("coordinators", [coordinator.body])[0]
    assert answer["port"] == mock.upstream.port
    joined = next(e for e in events if e.api == "JoinGroup" and e.direction == RESPONSE)
    assert joined.body["member_id"].startswith("0x")
