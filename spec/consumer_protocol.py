"""The "consumer" embedded protocol: ConsumerProtocolSubscription and ConsumerProtocolAssignment.

The coordinator treats member metadata and assignments as opaque bytes, except that for protocol
type "consumer" it decodes subscriptions to learn which topics a Stable group still consumes
(offset retention, reference §6). Clients encode their subscription into JoinGroup metadata and
the leader's assignments into SyncGroup (reference §7).

The layout is Kafka's non-flexible encoding, big-endian: an int16 version, then the fields of
that version. Strings are int16-length UTF-8, byte fields int32-length with -1 for null, arrays
int32-counted.

| message | v0 | v1 | v2 | v3 |
|---|---|---|---|---|
| Subscription | Topics, UserData | + OwnedPartitions | + GenerationId | + RackId |
| Assignment | AssignedPartitions, UserData | same | same | same |

As in Kafka's `ConsumerProtocol`, a version newer than the newest known is read as the newest
known (later fields are ignored), and a negative version is an error.
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Iterable

from groupspec.vocabulary.requests import TopicPartition

from .assignment import DEFAULT_GENERATION, Subscription, sorted_partitions

CONSUMER_PROTOCOL_TYPE = "consumer"
HIGHEST_SUBSCRIPTION_VERSION = 3
HIGHEST_ASSIGNMENT_VERSION = 3


class SubscriptionDecodeError(ValueError):
    """Bytes that are not a ConsumerProtocolSubscription or ConsumerProtocolAssignment."""


class _Reader:
    """Reads Kafka primitive types, naming the byte offset of any problem."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offset = 0

    def _unpack(self, fmt: str) -> int:
        size = struct.calcsize(fmt)
        if self.offset + size > len(self.data):
            raise SubscriptionDecodeError(f"truncated at byte {self.offset}")
        (value,) = struct.unpack_from(fmt, self.data, self.offset)
        self.offset += size
        return int(value)

    def int16(self) -> int:
        return self._unpack(">h")

    def int32(self) -> int:
        return self._unpack(">i")

    def _raw(self, length: int, what: str) -> bytes:
        if length < 0 or self.offset + length > len(self.data):
            raise SubscriptionDecodeError(f"bad {what} length {length} at byte {self.offset}")
        raw = self.data[self.offset : self.offset + length]
        self.offset += length
        return raw

    def nullable_string(self) -> str | None:
        start = self.offset
        length = self.int16()
        if length == -1:
            return None
        try:
            return self._raw(length, "string").decode("utf-8")
        except UnicodeDecodeError as error:
            raise SubscriptionDecodeError(f"string at byte {start} is not UTF-8") from error

    def string(self) -> str:
        start = self.offset
        value = self.nullable_string()
        if value is None:
            raise SubscriptionDecodeError(f"null string at byte {start}")
        return value

    def nullable_bytes(self) -> bytes | None:
        length = self.int32()
        return None if length == -1 else self._raw(length, "bytes")

    def count(self, what: str) -> int:
        start = self.offset
        value = self.int32()
        if value < 0:
            raise SubscriptionDecodeError(f"negative {what} count {value} at byte {start}")
        return value

    def topic_partitions(self) -> tuple[TopicPartition, ...]:
        partitions: list[TopicPartition] = []
        for _ in range(self.count("topic")):
            topic = self.string()
            partitions.extend(
                TopicPartition(topic, self.int32()) for _ in range(self.count("partition"))
            )
        return tuple(partitions)

    def version(self, highest: int) -> int:
        version = self.int16()
        if version < 0:
            raise SubscriptionDecodeError(f"negative version {version}")
        return min(version, highest)


def _string(value: str | None) -> bytes:
    if value is None:
        return struct.pack(">h", -1)
    encoded = value.encode("utf-8")
    return struct.pack(">h", len(encoded)) + encoded


def _nullable_bytes(value: bytes | None) -> bytes:
    if value is None:
        return struct.pack(">i", -1)
    return struct.pack(">i", len(value)) + value


def _topic_partitions(partitions: Iterable[TopicPartition]) -> bytes:
    by_topic: dict[str, list[int]] = defaultdict(list)
    for partition in sorted_partitions(partitions):
        by_topic[partition.topic].append(partition.partition)
    out = bytearray(struct.pack(">i", len(by_topic)))
    for topic, numbers in by_topic.items():
        out += _string(topic) + struct.pack(f">i{len(numbers)}i", len(numbers), *numbers)
    return bytes(out)


def encode_subscription(
    subscription: Subscription, version: int = HIGHEST_SUBSCRIPTION_VERSION
) -> bytes:
    """A ConsumerProtocolSubscription of `version`; fields the version lacks are dropped."""
    if not 0 <= version <= HIGHEST_SUBSCRIPTION_VERSION:
        raise ValueError(f"ConsumerProtocolSubscription has no version {version}")
    out = bytearray(struct.pack(">hi", version, len(subscription.topics)))
    for topic in subscription.topics:
        out += _string(topic)
    out += _nullable_bytes(subscription.user_data)
    if version >= 1:
        out += _topic_partitions(subscription.owned_partitions)
    if version >= 2:
        out += struct.pack(">i", subscription.generation)
    if version >= 3:
        out += _string(subscription.rack)
    return bytes(out)


def decode_subscription(metadata: bytes) -> Subscription:
    """The subscription in JoinGroup member metadata; absent fields take Kafka's defaults."""
    reader = _Reader(metadata)
    version = reader.version(HIGHEST_SUBSCRIPTION_VERSION)
    topics = [reader.string() for _ in range(reader.count("topic"))]
    user_data = reader.nullable_bytes()
    owned = reader.topic_partitions() if version >= 1 else ()
    generation = reader.int32() if version >= 2 else DEFAULT_GENERATION
    rack = reader.nullable_string() if version >= 3 else None
    return Subscription.of(topics, owned, generation, rack, user_data)


def subscription_topics(metadata: bytes) -> frozenset[str]:
    """The topics a ConsumerProtocolSubscription subscribes to."""
    return frozenset(decode_subscription(metadata).topics)


def encode_subscription_v0(topics: tuple[str, ...], user_data: bytes | None = None) -> bytes:
    """A version-0 ConsumerProtocolSubscription for `topics` (used by tests and simulations)."""
    return encode_subscription(Subscription.of(topics, user_data=user_data), version=0)


def encode_assignment(
    partitions: Iterable[TopicPartition],
    user_data: bytes | None = None,
    version: int = HIGHEST_ASSIGNMENT_VERSION,
) -> bytes:
    """A ConsumerProtocolAssignment: the member's partitions and the assignor's user data."""
    if not 0 <= version <= HIGHEST_ASSIGNMENT_VERSION:
        raise ValueError(f"ConsumerProtocolAssignment has no version {version}")
    return struct.pack(">h", version) + _topic_partitions(partitions) + _nullable_bytes(user_data)


def decode_assignment(data: bytes) -> tuple[tuple[TopicPartition, ...], bytes | None]:
    """The partitions and user data in a SyncGroup assignment.

    Empty bytes (what the coordinator stores for members the leader left out, reference §2.3)
    do not decode: Kafka's client cannot read a version from them and fails the same way.
    """
    reader = _Reader(data)
    reader.version(HIGHEST_ASSIGNMENT_VERSION)
    partitions = sorted_partitions(reader.topic_partitions())
    return partitions, reader.nullable_bytes()
