"""`__consumer_offsets` on disk: framing, torn tails, and reloading groups after a restart."""

from __future__ import annotations

import logging

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata
from serve_support import ServerThread, serve_config

from groupspec.impl.log import (
    GroupMetadataMemberValue,
    GroupMetadataValue,
    GroupMetadataWrite,
    OffsetCommitValue,
    OffsetWrite,
)
from groupspec.impl.server.offsets_file import (
    FILE_NAME,
    OffsetsFile,
    record_from_json,
    record_to_json,
)
from groupspec.record.workload.members import python_member, wait_until

RECORDS = [
    OffsetWrite("g", "t", 3, OffsetCommitValue(42, -1, "meta", 1000, None)),
    OffsetWrite("g", "t", 4, None),
    GroupMetadataWrite(
        "g",
        GroupMetadataValue(
            "consumer",
            7,
            "range",
            "m-1",
            123,
            (
                GroupMetadataMemberValue(
                    "m-1", "i-1", "c", "/127.0.0.1", 3000, 6000, b"\x00sub", b"\x01asg"
                ),
            ),
        ),
    ),
    GroupMetadataWrite("h", None),
]


def test_records_round_trip_through_json():
    for record in RECORDS:
        assert record_from_json(record_to_json(record)) == record


def write_entries(directory, count):
    offsets = OffsetsFile(directory)
    for i in range(count):
        offsets.append(i % 50, [OffsetWrite("g", "t", i, OffsetCommitValue(i, -1, None, i, None))])
    offsets.close()
    return directory / FILE_NAME


@pytest.mark.parametrize("damage", ["cut-payload", "cut-header", "flip-byte", "garbage"])
def test_a_torn_or_corrupt_last_entry_is_dropped_with_a_warning(tmp_path, caplog, damage):
    path = write_entries(tmp_path, 5)
    data = path.read_bytes()
    if damage == "cut-payload":
        data = data[:-3]
    elif damage == "cut-header":
        data = data + b"\x00\x00\x00"
    elif damage == "flip-byte":
        data = data[:-2] + bytes([data[-2] ^ 0x40]) + data[-1:]
    else:
        data = data + b"\x00\x00\x00\x04\xde\xad\xbe\xefjunk"
    path.write_bytes(data)
    with caplog.at_level(logging.WARNING, logger="groupspec.serve"):
        entries = OffsetsFile(tmp_path).load()
    expected = 5 if damage in ("cut-header", "garbage") else 4
    assert [records[0].partition for _, records in entries] == list(range(expected))
    assert any("dropping" in r.getMessage() for r in caplog.records)
    # The tail is cut off, so the next append follows good data and loads.
    offsets = OffsetsFile(tmp_path)
    offsets.append(9, [OffsetWrite("g", "t", 99, OffsetCommitValue(99, -1, None, 0, None))])
    offsets.close()
    reloaded = OffsetsFile(tmp_path).load()
    assert len(reloaded) == expected + 1 and reloaded[-1][1][0].partition == 99


def test_a_clean_file_loads_without_warnings(tmp_path, caplog):
    write_entries(tmp_path, 3)
    with caplog.at_level(logging.WARNING, logger="groupspec.serve"):
        assert len(OffsetsFile(tmp_path).load()) == 3
    assert not caplog.records


def test_a_restart_reloads_groups_and_offsets_and_drops_a_torn_tail(tmp_path, caplog):
    server = ServerThread(serve_config(data_dir=tmp_path, topics={"t": 6})).start()
    try:
        # Offsets committed without group management (a simple consumer).
        simple = KafkaConsumer(bootstrap_servers=server.bootstrap, group_id="simple")
        simple.assign([TopicPartition("t", 2)])
        simple.commit({TopicPartition("t", 2): OffsetAndMetadata(17, "m", -1)})
        simple.close()
        # A group with a member, killed without leaving.
        member = python_member("m", "kafka-python", server.bootstrap, "live", "t")
        wait_until(lambda: member.assignment == frozenset(range(6)), "the member's assignment")
        member.kill()
        server.stop()
        with (tmp_path / FILE_NAME).open("ab") as handle:
            handle.write(b"\x00\x00\x01\x00\x12\x34")  # a torn append at the end
        with caplog.at_level(logging.INFO, logger="groupspec.serve"):
            server.start()
        assert any("dropping" in r.getMessage() for r in caplog.records)
        admin = KafkaAdminClient(bootstrap_servers=server.bootstrap)
        try:
            offsets = admin.list_group_offsets("simple")["simple"]
            assert {tp.partition: m.offset for tp, m in offsets.items()} == {2: 17}
            # The group comes back Stable with its member, whose session then times out.
            group = admin.describe_groups(["live"])["live"]
            assert group["group_state"] == "Stable" and len(group["members"]) == 1
            wait_until(
                lambda: admin.describe_groups(["live"])["live"]["group_state"] == "Empty",
                "the reloaded member's session to expire",
            )
        finally:
            admin.close()
    finally:
        server.stop()
