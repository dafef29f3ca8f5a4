"""The group scenario every real client runs against `groupspec serve` (see docs/serve.md).

Three consumers share a 6-partition topic (clean run: every record exactly once, offsets
committed), a fourth joins, one stops, one is killed (its partitions move after its session
timeout), and the committed offsets survive a server restart. The steps are the workloads'
(`groupspec.record.workload.steps`); the offsets are read back from the server with an admin client.
"""

from __future__ import annotations

from collections.abc import Callable

from kafka import KafkaAdminClient
from serve_support import ServerThread

from groupspec.record.workload.members import Member, wait_until
from groupspec.record.workload.steps import consumed, produce, wait_balanced, wait_consumed

PARTITIONS = 6


def committed(bootstrap: str, group: str) -> dict[int, int]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        offsets = admin.list_group_offsets(group)[group]
    finally:
        admin.close()
    return {tp.partition: meta.offset for tp, meta in offsets.items()}


def run_group_scenario(
    server: ServerThread,
    make_member: Callable[[str], Member],
    topic: str,
    group: str,
    *,
    kill: bool = True,
) -> None:
    """The whole scenario; raises with the members' output on failure."""
    bootstrap = server.bootstrap
    members = [make_member(f"m{i}") for i in range(3)]
    everyone = list(members)
    try:
        wait_balanced(members, everyone, PARTITIONS)

        # A clean run: every record consumed exactly once, every offset committed.
        first = produce(bootstrap, topic, "a", 60, PARTITIONS)
        wait_consumed(first, everyone, "the first 60 records")
        counts = consumed(everyone)
        assert all(counts[v] == 1 for v in first), {v: counts[v] for v in first if counts[v] != 1}
        wait_until(
            lambda: committed(bootstrap, group) == dict.fromkeys(range(PARTITIONS), 10),
            "offsets 10 committed on every partition",
        )

        # A fourth member joins: four members share the six partitions.
        members.append(make_member("m3"))
        everyone.append(members[-1])
        wait_balanced(members, everyone, PARTITIONS)
        second = produce(bootstrap, topic, "b", 24, PARTITIONS)
        wait_consumed(second, everyone, "the records after a join")

        # One member stops: the other three take its partitions.
        members.pop(0).stop()
        wait_balanced(members, everyone, PARTITIONS)
        third = produce(bootstrap, topic, "c", 24, PARTITIONS)
        wait_consumed(third, everyone, "the records after a stop")

        if kill:
            # One member is killed: its partitions move once its session times out.
            members.pop(0).kill()
            wait_balanced(members, everyone, PARTITIONS)
            fourth = produce(bootstrap, topic, "d", 24, PARTITIONS)
            wait_consumed(fourth, everyone, "the records after a kill")

        total = 60 + 24 + 24 + (24 if kill else 0)
        expected = dict.fromkeys(range(PARTITIONS), total // PARTITIONS)
        wait_until(lambda: committed(bootstrap, group) == expected, "every offset committed")
    finally:
        for member in members:
            member.stop()
        for member in everyone:
            member.kill()

    # Committed offsets survive a restart (the coordinator reloads the offsets file).
    server.restart()
    assert committed(server.bootstrap, group) == expected
