"""How range and roundrobin order the members of a group, and Java's string order.

Kafka's `AbstractPartitionAssignor.MemberInfo` sorts members with a group instance id (static
members) first, by instance id, then the others by member id. Both comparisons are Java's
`String.compareTo`, which compares UTF-16 code units. Python compares strings by code point;
the two orders differ as soon as a character outside the Basic Multilingual Plane (encoded as a
surrogate pair, units 0xD800–0xDFFF) meets a character in 0xE000–0xFFFF. `java_string_key`
gives a sort key that orders strings exactly as Java does.

Kafka's topic names are restricted to ASCII letters, digits, '.', '_' and '-', so for topics the
two orders agree; member ids (prefixed by the client id) and instance ids are free-form.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..assignment import Member


def java_string_key(value: str) -> tuple[int, ...]:
    """A sort key under which strings compare like Java's `String.compareTo` (UTF-16 units)."""
    # surrogatepass keeps lone surrogates (which a Java String may hold) encodable.
    encoded = value.encode("utf-16-be", errors="surrogatepass")
    return tuple(int.from_bytes(encoded[i : i + 2], "big") for i in range(0, len(encoded), 2))


def member_order_key(member: Member) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """The sort key of `MemberInfo.compareTo`: static members by instance id, then the rest by id.

    Instance ids are unique within a group (the coordinator enforces it); should two members
    share one anyway, Java's stable sort would keep their input order, and this key falls back
    to the member id so the order is still total.
    """
    if member.group_instance_id is not None:
        return (0, java_string_key(member.group_instance_id), java_string_key(member.member_id))
    return (1, java_string_key(member.member_id), ())


def sorted_members(members: Iterable[Member]) -> tuple[Member, ...]:
    """Members in the order range and roundrobin hand out partitions."""
    return tuple(sorted(members, key=member_order_key))
