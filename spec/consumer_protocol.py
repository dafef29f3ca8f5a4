"""The part of ConsumerProtocolSubscription the coordinator reads: the subscribed topics.

The coordinator treats member metadata as opaque bytes, except that for protocol type
"consumer" it decodes the subscriptions to learn which topics a Stable group still consumes
(offset retention, reference §6). The layout is Kafka's non-flexible encoding: int16 version,
then an int32-counted array of int16-length strings; later fields (user data, owned partitions,
generation, rack) follow and are not needed here.
"""

from __future__ import annotations

import struct

CONSUMER_PROTOCOL_TYPE = "consumer"


class SubscriptionDecodeError(ValueError):
    """Metadata bytes that are not a ConsumerProtocolSubscription."""


def _read(data: bytes, offset: int, fmt: str) -> tuple[int, int]:
    size = struct.calcsize(fmt)
    if offset + size > len(data):
        raise SubscriptionDecodeError(f"truncated at byte {offset}")
    (value,) = struct.unpack_from(fmt, data, offset)
    return value, offset + size


def subscription_topics(metadata: bytes) -> frozenset[str]:
    """The topics a ConsumerProtocolSubscription subscribes to."""
    version, offset = _read(metadata, 0, ">h")
    if version < 0:
        raise SubscriptionDecodeError(f"negative version {version}")
    count, offset = _read(metadata, offset, ">i")
    if count < 0:
        raise SubscriptionDecodeError(f"negative topic count {count}")
    topics: list[str] = []
    for _ in range(count):
        length, offset = _read(metadata, offset, ">h")
        if length < 0 or offset + length > len(metadata):
            raise SubscriptionDecodeError(f"bad topic name length {length} at byte {offset}")
        try:
            topics.append(metadata[offset : offset + length].decode("utf-8"))
        except UnicodeDecodeError as error:
            raise SubscriptionDecodeError(f"topic name is not UTF-8 at byte {offset}") from error
        offset += length
    return frozenset(topics)


def encode_subscription_v0(topics: tuple[str, ...], user_data: bytes | None = None) -> bytes:
    """A version-0 ConsumerProtocolSubscription for `topics` (used by tests and simulations)."""
    out = bytearray(struct.pack(">hi", 0, len(topics)))
    for topic in topics:
        encoded = topic.encode("utf-8")
        out += struct.pack(">h", len(encoded)) + encoded
    if user_data is None:
        out += struct.pack(">i", -1)
    else:
        out += struct.pack(">i", len(user_data)) + user_data
    return bytes(out)
