"""The topics of a "consumer" protocol subscription (ConsumerProtocolSubscription v0–v3).

The coordinator treats member metadata as opaque, except that for protocol type "consumer" it
reads which topics a Stable group still consumes, to decide which offsets may expire. A
subscription that does not decode in full (Kafka's client would fail on it too) yields None.
"""

from __future__ import annotations

import struct

CONSUMER_PROTOCOL_TYPE = "consumer"
_HIGHEST_SUBSCRIPTION_VERSION = 3
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


class _Truncated(Exception):
    """The bytes end (or a length is impossible) before the message does."""


class _Reader:
    __slots__ = ("data", "offset")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offset = 0

    def int16(self) -> int:
        if self.offset + 2 > len(self.data):
            raise _Truncated
        (value,) = _INT16.unpack_from(self.data, self.offset)
        self.offset += 2
        return int(value)

    def int32(self) -> int:
        if self.offset + 4 > len(self.data):
            raise _Truncated
        (value,) = _INT32.unpack_from(self.data, self.offset)
        self.offset += 4
        return int(value)

    def skip(self, length: int) -> bytes:
        if length < 0 or self.offset + length > len(self.data):
            raise _Truncated
        raw = self.data[self.offset : self.offset + length]
        self.offset += length
        return raw

    def nullable_string(self) -> str | None:
        length = self.int16()
        if length == -1:
            return None
        try:
            return self.skip(length).decode("utf-8")
        except UnicodeDecodeError as error:
            raise _Truncated from error

    def string(self) -> str:
        value = self.nullable_string()
        if value is None:
            raise _Truncated
        return value

    def count(self) -> int:
        value = self.int32()
        if value < 0:
            raise _Truncated
        return value


def subscription_topics(metadata: bytes) -> frozenset[str] | None:
    """The topics a subscription names, or None if the bytes are not a whole subscription.

    The spec's `subscription_topics` raises on such bytes; here None keeps the hot path free of
    exceptions for a caller that only needs "unknown".
    """
    reader = _Reader(metadata)
    try:
        version = reader.int16()
        if version < 0:
            return None
        version = min(version, _HIGHEST_SUBSCRIPTION_VERSION)
        topics = [reader.string() for _ in range(reader.count())]
        user_data_length = reader.int32()
        if user_data_length != -1:
            reader.skip(user_data_length)
        if version >= 1:  # owned partitions
            for _ in range(reader.count()):
                reader.string()
                for _ in range(reader.count()):
                    reader.int32()
        if version >= 2:  # generation
            reader.int32()
        if version >= 3:  # rack
            reader.nullable_string()
    except _Truncated:
        return None
    return frozenset(topics)


_HIGHEST_ASSIGNMENT_VERSION = 3


def subscription_fields(
    metadata: bytes,
) -> tuple[tuple[str, ...], tuple[tuple[str, int], ...], str | None] | None:
    """The topics, owned partitions (v1+) and rack (v3+) of a subscription, or None if the
    bytes are not a whole subscription."""
    reader = _Reader(metadata)
    try:
        version = reader.int16()
        if version < 0:
            return None
        version = min(version, _HIGHEST_SUBSCRIPTION_VERSION)
        topics = tuple(reader.string() for _ in range(reader.count()))
        user_data_length = reader.int32()
        if user_data_length != -1:
            reader.skip(user_data_length)
        owned: list[tuple[str, int]] = []
        if version >= 1:
            for _ in range(reader.count()):
                topic = reader.string()
                owned.extend((topic, reader.int32()) for _ in range(reader.count()))
        if version >= 2:
            reader.int32()
        rack = reader.nullable_string() if version >= 3 else None
    except _Truncated:
        return None
    return topics, tuple(owned), rack


def encode_assignment(partitions: list[tuple[str, int]], subscription: bytes) -> bytes:
    """A ConsumerProtocolAssignment of `partitions` (sorted) without user data, in the version
    of the member's subscription `subscription` (Kafka's prepareAssignment)."""
    version = _HIGHEST_ASSIGNMENT_VERSION
    if len(subscription) >= 2:
        (asked,) = _INT16.unpack_from(subscription, 0)
        version = max(0, min(int(asked), _HIGHEST_ASSIGNMENT_VERSION))
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(partitions):
        by_topic.setdefault(topic, []).append(partition)
    out = bytearray(_INT16.pack(version) + _INT32.pack(len(by_topic)))
    for topic, numbers in by_topic.items():
        name = topic.encode("utf-8")
        out += _INT16.pack(len(name)) + name + _INT32.pack(len(numbers))
        for number in numbers:
            out += _INT32.pack(number)
    out += _INT32.pack(-1)  # no user data
    return bytes(out)
