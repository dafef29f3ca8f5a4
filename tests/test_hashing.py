"""Coordinator placement (reference §6): Java's String.hashCode and Kafka's Utils.abs."""

from __future__ import annotations

import pytest

from groupspec.spec import CoordinatorConfig, GroupCoordinatorSpec
from groupspec.spec.hashing import java_string_hash, kafka_utils_abs, partition_for

INT_MIN = -(2**31)
INT_MAX = 2**31 - 1


def utf16_code_units(text):
    """UTF-16 code units, computed by hand: code points above U+FFFF become surrogate pairs."""
    units = []
    for char in text:
        code_point = ord(char)
        if code_point > 0xFFFF:
            offset = code_point - 0x10000
            units += [0xD800 + (offset >> 10), 0xDC00 + (offset & 0x3FF)]
        else:
            units.append(code_point)
    return units


def to_int32(value):
    value %= 2**32
    return value - 2**32 if value > INT_MAX else value


def reference_hash(text):
    """h = 31*h + c over UTF-16 code units, wrapping to a signed 32-bit int at every step."""
    h = 0
    for unit in utf16_code_units(text):
        h = to_int32(31 * h + unit)
    return h


def reference_partition(group_id, partitions):
    h = reference_hash(group_id)
    return (0 if h == INT_MIN else abs(h)) % partitions


SAMPLES = [
    "",
    "a",
    "hello",
    "Hello World",
    "Aa",
    "BB",
    "my-consumer-group",
    "connect-cluster-offsets",
    "a-rather-long-group-id-that-wraps-around-32-bits-many-times-over-0123456789",
    "ü",
    "日本",
    "😀",
    "grüße-日本-😀-group",
    "\u0000\uffff",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_java_string_hash_matches_definition(text):
    assert java_string_hash(text) == reference_hash(text)
    assert INT_MIN <= java_string_hash(text) <= INT_MAX


@pytest.mark.parametrize(
    ("text", "java_hash_code"),
    [
        ("", 0),
        ("a", 97),
        ("abc", 96354),
        ("hello", 99162322),
        ("Hello World", -862545276),
        ("Aa", 2112),
        ("BB", 2112),
        ("ü", 252),
        ("日本", 835047),
        ("😀", 1772899),  # U+1F600 is the surrogate pair D83D DE00
        ("polygenelubricants", INT_MIN),
    ],
)
def test_java_string_hash_known_values(text, java_hash_code):
    assert reference_hash(text) == java_hash_code
    assert java_string_hash(text) == java_hash_code


def test_hash_collision_aa_bb():
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("AaAa") == java_string_hash("BBBB") == java_string_hash("AaBB")


def test_supplementary_character_hashes_as_its_surrogate_pair():
    pair = "\ud83d\ude00"  # the same Java string as "😀", spelled as two code units
    assert java_string_hash(pair) == java_string_hash("😀") == 0xD83D * 31 + 0xDE00
    # ü is one code unit (U+00FC), not its two UTF-8 bytes.
    assert java_string_hash("ü") == 0xFC


def test_kafka_utils_abs():
    assert kafka_utils_abs(INT_MIN) == 0
    assert kafka_utils_abs(INT_MIN + 1) == INT_MAX
    assert kafka_utils_abs(INT_MAX) == INT_MAX
    assert kafka_utils_abs(-5) == 5
    assert kafka_utils_abs(5) == 5
    assert kafka_utils_abs(0) == 0


def string_hashing_to_int_min():
    """Construct a string whose hashCode is Integer.MIN_VALUE.

    Four code units cannot reach 2**31 (at most 65535 * (31**3 + 31**2 + 31 + 1)), so take a
    prefix and solve for three trailing characters c0, c1, c2 (printable ASCII for the last
    two): hash = hash(prefix) * 31**3 + 961*c0 + 31*c1 + c2 (mod 2**32).
    """
    assert 65535 * (31**3 + 31**2 + 31 + 1) < 2**31
    for index in range(100_000):
        prefix = f"group-{index}-"
        needed = (2**31 - reference_hash(prefix) * 31**3) % 2**32
        c2 = ord("A") + (needed - ord("A")) % 31
        rest, remainder = divmod(needed - c2, 31)
        assert remainder == 0
        c1 = ord("A") + (rest - ord("A")) % 31
        c0, remainder = divmod(rest - c1, 31)
        assert remainder == 0
        if 0x20 <= c0 <= 0xFFFF and not 0xD800 <= c0 <= 0xDFFF:
            return prefix + chr(c0) + chr(c1) + chr(c2)
    raise AssertionError("no string found")


@pytest.mark.parametrize("group_id", ["polygenelubricants", string_hashing_to_int_min()])
def test_group_whose_hash_is_int_min_lands_on_partition_zero(group_id):
    assert reference_hash(group_id) == INT_MIN
    assert java_string_hash(group_id) == INT_MIN
    # Python's abs would give 2**31 % 50 == 48; Utils.abs gives 0.
    assert abs(INT_MIN) % 50 == 48
    assert partition_for(group_id, 50) == 0
    assert GroupCoordinatorSpec().partition_for(group_id) == 0
    for partitions in (1, 3, 7, 50, 1000):
        assert partition_for(group_id, partitions) == 0


def test_negative_hash_uses_abs_not_sign_mask():
    # hash("Hello World") = -862545276: |h| % 50 = 26, whereas (h & 0x7fffffff) % 50 = 22.
    assert partition_for("Hello World", 50) == 26
    assert (java_string_hash("Hello World") & 0x7FFFFFFF) % 50 == 22


@pytest.mark.parametrize("group_id", SAMPLES)
@pytest.mark.parametrize("partitions", [1, 50, 128])
def test_partition_for_matches_definition(group_id, partitions):
    assert partition_for(group_id, partitions) == reference_partition(group_id, partitions)
    spec = GroupCoordinatorSpec(CoordinatorConfig(offsets_topic_num_partitions=partitions))
    assert spec.partition_for(group_id) == reference_partition(group_id, partitions)


def test_partition_for_refuses_non_positive_partition_count():
    with pytest.raises(ValueError):
        partition_for("g", 0)
