"""The subscription user data of the two sticky assignors.

Both use Kafka's old (non-flexible) protocol types, big-endian: INT32 is 4 bytes, STRING an
int16 length then UTF-8 bytes, ARRAY an int32 count then the elements.

StickyAssignor ("sticky") — the member's previous assignment and its generation:

| version | fields |
|---|---|
| v0 | previous_assignment: ARRAY of {topic: STRING, partitions: ARRAY of INT32} |
| v1 | previous_assignment, generation: INT32 |

There is no version number in the bytes. Kafka always writes v1; a reader first tries v1, then
v0 (which has no generation), and if neither parses it ignores the data and uses no partitions
with generation −1. Trailing bytes are ignored. Null or empty user data means no partitions and
no generation.

CooperativeStickyAssignor ("cooperative-sticky") — v0: generation: INT32. Null user data means
no generation; bytes that do not parse mean generation −1.
"""

from __future__ import annotations

import struct
from collections import defaultdict
from dataclasses import dataclass

from groupspec.vocabulary.requests import TopicPartition

from ..assignment import DEFAULT_GENERATION, sorted_partitions
from .ordering import java_string_key


@dataclass(frozen=True)
class MemberData:
    """What a sticky assignor learns of a member's past (Kafka's `AbstractStickyAssignor.MemberData`).

    `partitions` are the partitions it claims to own, as sent (order kept, not validated);
    `generation` is the generation of that claim, None when the member sent none.
    """

    partitions: tuple[TopicPartition, ...]
    generation: int | None


class UserDataDecodeError(ValueError):
    """User data that is not the assignor's schema."""


class _Reader:
    """Reads old-style protocol types; any shortfall is a decode error (Java's SchemaException)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offset = 0

    def _take(self, size: int) -> bytes:
        if size < 0 or self.offset + size > len(self.data):
            raise UserDataDecodeError(f"truncated at byte {self.offset}")
        raw = self.data[self.offset : self.offset + size]
        self.offset += size
        return raw

    def int16(self) -> int:
        return int(struct.unpack(">h", self._take(2))[0])

    def int32(self) -> int:
        return int(struct.unpack(">i", self._take(4))[0])

    def array_count(self) -> int:
        count = self.int32()
        # Kafka's ArrayOf refuses a negative count and a count above the bytes left.
        if count < 0 or count > len(self.data) - self.offset:
            raise UserDataDecodeError(f"bad array count {count}")
        return count

    def string(self) -> str:
        length = self.int16()
        if length < 0:
            raise UserDataDecodeError(f"negative string length {length}")
        # Java decodes malformed UTF-8 with replacement characters rather than failing.
        return self._take(length).decode("utf-8", errors="replace")


def _string(value: str) -> bytes:
    encoded = value.encode("utf-8")
    return struct.pack(">h", len(encoded)) + encoded


def encode_sticky_user_data(partitions: tuple[TopicPartition, ...], generation: int) -> bytes:
    """StickyAssignor user data v1: the member's last assignment and its generation.

    Topics are written in Java string order and partitions ascending (Kafka groups them in a
    hash map, so its order is arbitrary; readers do not depend on it).
    """
    by_topic: dict[str, list[int]] = defaultdict(list)
    for partition in sorted_partitions(partitions):
        by_topic[partition.topic].append(partition.partition)
    out = bytearray(struct.pack(">i", len(by_topic)))
    for topic in sorted(by_topic, key=java_string_key):
        numbers = by_topic[topic]
        out += _string(topic) + struct.pack(f">i{len(numbers)}i", len(numbers), *numbers)
    out += struct.pack(">i", generation)
    return bytes(out)


def _read_previous_assignment(reader: _Reader) -> tuple[TopicPartition, ...]:
    partitions: list[TopicPartition] = []
    for _ in range(reader.array_count()):
        topic = reader.string()
        partitions.extend(
            TopicPartition(topic, reader.int32()) for _ in range(reader.array_count())
        )
    return tuple(partitions)


def decode_sticky_user_data(data: bytes | None) -> MemberData:
    """What StickyAssignor reads from a member's user data (v1, else v0, else nothing usable)."""
    if not data:
        return MemberData((), None)
    try:
        reader = _Reader(data)
        partitions = _read_previous_assignment(reader)
        return MemberData(partitions, reader.int32())
    except UserDataDecodeError:
        pass
    try:
        return MemberData(_read_previous_assignment(_Reader(data)), None)
    except UserDataDecodeError:
        return MemberData((), DEFAULT_GENERATION)


def encode_cooperative_sticky_user_data(generation: int) -> bytes:
    """CooperativeStickyAssignor user data v0: the member's generation."""
    return struct.pack(">i", generation)


def decode_cooperative_sticky_generation(data: bytes | None) -> int | None:
    """The generation in CooperativeStickyAssignor user data; None when there is no user data."""
    if data is None:
        return None
    try:
        return _Reader(data).int32()
    except UserDataDecodeError:
        return DEFAULT_GENERATION
