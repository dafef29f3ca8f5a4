"""Which `__consumer_offsets` partition owns a group: `Utils.abs(groupId.hashCode()) % n`."""

from __future__ import annotations

import sys
from array import array
from functools import lru_cache

_INT32_MIN = -(2**31)
# UTF-16 code units in the machine's byte order, so `array("H")` reads them without swapping.
_UTF16_NATIVE = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"


def java_string_hash(text: str) -> int:
    """Java's `String.hashCode()`: h = 31*h + c over UTF-16 code units, as a signed int32."""
    h = 0
    for unit in array("H", text.encode(_UTF16_NATIVE, errors="surrogatepass")):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - 2**32 if h >= 2**31 else h


def kafka_utils_abs(n: int) -> int:
    """Kafka's `Utils.abs`: |n|, except that Integer.MIN_VALUE maps to 0."""
    return 0 if n == _INT32_MIN else abs(n)


@lru_cache(maxsize=1 << 16)
def partition_for(group_id: str, num_partitions: int) -> int:
    """The offsets-topic partition of `group_id` (cached: group ids repeat on every request)."""
    if num_partitions <= 0:
        raise ValueError(
            f"the offsets topic needs a positive partition count, got {num_partitions}"
        )
    return kafka_utils_abs(java_string_hash(group_id)) % num_partitions
