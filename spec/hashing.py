"""Which `__consumer_offsets` partition, and so which coordinator, owns a group (reference §6)."""

from __future__ import annotations

_INT32_MIN = -(2**31)


def _to_int32(value: int) -> int:
    """Wrap an integer to Java's 32-bit two's-complement range."""
    value &= 0xFFFFFFFF
    return value - 2**32 if value >= 2**31 else value


def java_string_hash(text: str) -> int:
    """Java's `String.hashCode()`: h = 31*h + c over UTF-16 code units, wrapping at 32 bits."""
    encoded = text.encode("utf-16-be", errors="surrogatepass")
    h = 0
    for i in range(0, len(encoded), 2):
        code_unit = (encoded[i] << 8) | encoded[i + 1]
        h = _to_int32(31 * h + code_unit)
    return h


def kafka_utils_abs(n: int) -> int:
    """Kafka's `Utils.abs`: |n|, except that Integer.MIN_VALUE maps to 0 (not to itself)."""
    return 0 if n == _INT32_MIN else abs(n)


def partition_for(group_id: str, num_partitions: int) -> int:
    """The offsets-topic partition of `group_id`: `Utils.abs(groupId.hashCode()) % partitions`."""
    if num_partitions <= 0:
        raise ValueError(f"offsets.topic.num.partitions must be positive, got {num_partitions}")
    return kafka_utils_abs(java_string_hash(group_id)) % num_partitions
