"""`__consumer_offsets` on disk: an append-only file of length- and CRC-framed entries.

Each entry is one append of the coordinator (the records of one commit, one group-metadata
write, ...), so a torn write loses a whole append, never part of one: `>II` (payload length,
CRC-32 of the payload) then the payload, JSON. Loading stops at the first entry whose frame or
CRC does not check, warns, and truncates the file there so later appends follow good data.

Fsync policy: every append is written and flushed to the OS before the coordinator answers
(it survives a crash of the server process); `fsync` runs at most every `fsync_interval_ms`
(from the server's tick) and on close, or after every append when the interval is 0.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import struct
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

from groupspec.impl.hashing import partition_for
from groupspec.impl.kip848.records import ConsumerGroupRecord
from groupspec.impl.log import (
    GroupMetadataMemberValue,
    GroupMetadataValue,
    GroupMetadataWrite,
    LogRecord,
    OffsetCommitValue,
    OffsetWrite,
)
from groupspec.impl.policy import DefaultPolicy
from groupspec.vocabulary.errors import ErrorCode

LOGGER = logging.getLogger("groupspec.serve")
_FRAME = struct.Struct(">II")
FILE_NAME = "__consumer_offsets.log"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


# A record of either coordinator: the classic one's, or a consumer-protocol group's.
StoredRecord = GroupMetadataWrite | OffsetWrite | ConsumerGroupRecord


def record_to_json(record: StoredRecord) -> dict[str, Any]:
    """A log record as JSON-ready data."""
    if isinstance(record, ConsumerGroupRecord):
        return {"k": "c", "g": record.group_id, "key": list(record.key), "v": record.value}
    if isinstance(record, OffsetWrite):
        value = record.value
        return {
            "k": "o",
            "g": record.group_id,
            "t": record.topic,
            "p": record.partition,
            "v": None
            if value is None
            else [
                value.offset,
                value.leader_epoch,
                value.metadata,
                value.commit_timestamp_ms,
                value.expire_timestamp_ms,
            ],
        }
    group = record.value
    return {
        "k": "g",
        "g": record.group_id,
        "v": None
        if group is None
        else {
            "type": group.protocol_type,
            "gen": group.generation_id,
            "proto": group.protocol_name,
            "leader": group.leader,
            "ts": group.current_state_timestamp_ms,
            "members": [
                [
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    m.rebalance_timeout_ms,
                    m.session_timeout_ms,
                    _b64(m.subscription),
                    _b64(m.assignment),
                ]
                for m in group.members
            ],
        },
    }


def record_from_json(data: dict[str, Any]) -> StoredRecord:
    """The log record `record_to_json` wrote (raises KeyError/TypeError/ValueError otherwise)."""
    if data["k"] == "c":
        return ConsumerGroupRecord(str(data["g"]), tuple(data["key"]), data["v"])
    if data["k"] == "o":
        raw = data["v"]
        value = None if raw is None else OffsetCommitValue(*raw)
        return OffsetWrite(data["g"], data["t"], int(data["p"]), value)
    if data["k"] != "g":
        raise ValueError(f"unknown record kind {data['k']!r}")
    raw = data["v"]
    if raw is None:
        return GroupMetadataWrite(data["g"], None)
    members = tuple(
        GroupMetadataMemberValue(m[0], m[1], m[2], m[3], m[4], m[5], _unb64(m[6]), _unb64(m[7]))
        for m in raw["members"]
    )
    group = GroupMetadataValue(
        raw["type"], raw["gen"], raw["proto"], raw["leader"], raw["ts"], members
    )
    return GroupMetadataWrite(data["g"], group)


class OffsetsFile:
    """The append-only offsets file of one server."""

    def __init__(self, directory: Path, fsync_interval_ms: int = 1000) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / FILE_NAME
        self.fsync_interval_ms = fsync_interval_ms
        self._file: BinaryIO | None = None
        self._dirty = False
        self._last_sync = time.monotonic()

    def load(self) -> list[tuple[int, list[StoredRecord]]]:
        """Every good entry as (offsets partition, records); drops a torn or corrupt tail."""
        entries: list[tuple[int, list[StoredRecord]]] = []
        data = self.path.read_bytes() if self.path.exists() else b""
        position = 0
        while position < len(data):
            problem = None
            if len(data) - position < _FRAME.size:
                problem = "a truncated entry header"
            else:
                length, crc = _FRAME.unpack_from(data, position)
                payload = data[position + _FRAME.size : position + _FRAME.size + length]
                if len(payload) < length:
                    problem = f"an entry of {length} bytes with only {len(payload)} present"
                elif zlib.crc32(payload) != crc:
                    problem = "an entry whose CRC does not match"
                else:
                    try:
                        body = json.loads(payload)
                        records = [record_from_json(item) for item in body["r"]]
                        entries.append((int(body["p"]), records))
                    except (ValueError, KeyError, TypeError, IndexError) as error:
                        problem = f"an undecodable entry ({error})"
            if problem is not None:
                LOGGER.warning(
                    "%s: %s at byte %d; dropping the %d bytes from there",
                    self.path,
                    problem,
                    position,
                    len(data) - position,
                )
                with self.path.open("r+b") as handle:
                    handle.truncate(position)
                break
            position += _FRAME.size + length
        return entries

    def append(self, partition: int, records: Sequence[StoredRecord]) -> None:
        """Write one entry and flush it to the OS (fsync per the policy)."""
        if self._file is None:
            self._file = self.path.open("ab")
        payload = json.dumps(
            {"p": partition, "r": [record_to_json(r) for r in records]}, separators=(",", ":")
        ).encode()
        self._file.write(_FRAME.pack(len(payload), zlib.crc32(payload)) + payload)
        self._file.flush()
        self._dirty = True
        if self.fsync_interval_ms == 0:
            self.sync()

    def maybe_sync(self) -> None:
        """fsync if writes are pending and the interval has passed."""
        if self._dirty and (time.monotonic() - self._last_sync) * 1000 >= self.fsync_interval_ms:
            self.sync()

    def sync(self) -> None:
        """fsync pending writes now."""
        if self._file is not None and self._dirty:
            os.fsync(self._file.fileno())
        self._dirty = False
        self._last_sync = time.monotonic()

    def close(self) -> None:
        """fsync and close."""
        self.sync()
        if self._file is not None:
            self._file.close()
            self._file = None


class DurablePolicy(DefaultPolicy):
    """Production choices, with every append to `__consumer_offsets` written to the file first.

    The coordinator asks its policy whether an append fails before applying it, with exactly
    the records it appends; this is where they reach the disk, and a failed write becomes the
    storage error Kafka reports (NOT_COORDINATOR to the client).
    """

    __slots__ = ("_file", "_partitions")

    def __init__(self, offsets_file: OffsetsFile, num_partitions: int) -> None:
        self._file = offsets_file
        self._partitions = num_partitions

    def append_error(self, group_id: str, records: Sequence[LogRecord]) -> ErrorCode | None:
        """None once the records are written; KAFKA_STORAGE_ERROR if the write failed."""
        try:
            self._file.append(partition_for(group_id, self._partitions), records)
        except OSError as error:
            LOGGER.error("writing %s failed: %s", self._file.path, error)
            return ErrorCode.KAFKA_STORAGE_ERROR
        return None
