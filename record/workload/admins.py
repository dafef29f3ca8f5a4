"""Each client library's admin client, for the admin step of a scenario: DescribeGroups,
ListGroups and OffsetFetch from the same library as the consumers, so a trace holds one
library's traffic. Each call answers a one-line summary, or says how it failed (librdkafka's
mock cluster, for one, implements neither DescribeGroups nor ListGroups)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

from .java_client import JavaAdmin

ADMIN_TIMEOUT_S = 20.0


class GroupAdmin(Protocol):
    """What a scenario asks an admin client."""

    def describe(self, group: str) -> Any:
        """DescribeGroups for `group`."""

    def list_groups(self) -> Any:
        """ListGroups."""

    def committed(self, group: str) -> Any:
        """OffsetFetch for `group`: {partition: offset}."""

    def close(self) -> None:
        """Close the client."""


def admin_step(admin: GroupAdmin, group: str) -> list[str]:
    """Describe the group, list the groups, fetch its offsets; one line per call, saying
    what came back or what went wrong (nothing raised)."""
    calls: list[tuple[str, Callable[[], Any]]] = [
        ("DescribeGroups", lambda: admin.describe(group)),
        ("ListGroups", admin.list_groups),
        ("OffsetFetch", lambda: admin.committed(group)),
    ]
    lines = []
    for name, call in calls:
        try:
            lines.append(f"{name}: {call()}")
        except Exception as error:  # any library's error, against any broker: reported
            lines.append(f"{name} failed: {type(error).__name__}: {error}")
    return lines


class KafkaPythonAdmin:
    """kafka-python's KafkaAdminClient."""

    def __init__(self, bootstrap: str, **options: Any) -> None:
        from kafka import KafkaAdminClient

        self._admin = KafkaAdminClient(bootstrap_servers=bootstrap, **options)

    def describe(self, group: str) -> Any:
        """DescribeGroups: the group's state and member count."""
        described = self._admin.describe_groups([group])
        info = described[group] if isinstance(described, dict) else described[0]
        if isinstance(info, dict):
            return f"{info.get('group_state')}, {len(info.get('members') or [])} members"
        return info

    def list_groups(self) -> Any:
        """ListGroups: the group ids."""
        return sorted(_group_id(g) for g in self._admin.list_groups())

    def committed(self, group: str) -> Any:
        """OffsetFetch: {partition: offset}."""
        offsets = self._admin.list_group_offsets(group)[group]
        return {tp.partition: meta.offset for tp, meta in sorted(offsets.items())}

    def close(self) -> None:
        """Close the client."""
        self._admin.close()


def _group_id(listed: Any) -> str:
    """A group id from a ListGroups entry (a dict, a tuple, or a name)."""
    if isinstance(listed, dict):
        return str(listed.get("group_id"))
    return str(listed[0] if isinstance(listed, tuple) else listed)


class AiokafkaAdmin:
    """aiokafka's AIOKafkaAdminClient, driven on a private event loop."""

    def __init__(self, bootstrap: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._admin = self._run(self._start(bootstrap))

    @staticmethod
    async def _start(bootstrap: str) -> Any:
        from aiokafka.admin import AIOKafkaAdminClient

        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)  # needs the running loop
        await admin.start()
        return admin

    def _run(self, coroutine: Any) -> Any:
        return self._loop.run_until_complete(asyncio.wait_for(coroutine, ADMIN_TIMEOUT_S))

    def describe(self, group: str) -> Any:
        """DescribeGroups: the group's state and member count."""
        (response,) = self._run(self._admin.describe_consumer_groups([group]))
        described = response.to_object()["groups"][0]
        return f"{described['state']}, {len(described['members'])} members"

    def list_groups(self) -> Any:
        """ListGroups: the group ids."""
        return sorted(_group_id(g) for g in self._run(self._admin.list_consumer_groups()))

    def committed(self, group: str) -> Any:
        """OffsetFetch: {partition: offset}."""
        offsets = self._run(self._admin.list_consumer_group_offsets(group))
        return {tp.partition: meta.offset for tp, meta in sorted(offsets.items())}

    def close(self) -> None:
        """Close the client and its loop."""
        try:
            self._run(self._admin.close())
        finally:
            self._loop.close()


class ConfluentAdmin:
    """confluent-kafka's (librdkafka's) AdminClient."""

    def __init__(self, bootstrap: str) -> None:
        from confluent_kafka.admin import AdminClient

        self._admin: Any = AdminClient({"bootstrap.servers": bootstrap})

    def describe(self, group: str) -> Any:
        """DescribeGroups: the group's state and member count."""
        futures = self._admin.describe_consumer_groups([group], request_timeout=ADMIN_TIMEOUT_S)
        description = futures[group].result(ADMIN_TIMEOUT_S)
        return f"{description.state.name}, {len(description.members)} members"

    def list_groups(self) -> Any:
        """ListGroups: the group ids (and errors from brokers that failed)."""
        future = self._admin.list_consumer_groups(request_timeout=ADMIN_TIMEOUT_S)
        result = future.result(ADMIN_TIMEOUT_S)
        if result.errors:
            raise RuntimeError("; ".join(str(error) for error in result.errors))
        return sorted(listing.group_id for listing in result.valid)

    def committed(self, group: str) -> Any:
        """OffsetFetch: {partition: offset}."""
        from confluent_kafka import ConsumerGroupTopicPartitions

        futures = self._admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group)], request_timeout=ADMIN_TIMEOUT_S
        )
        answer = futures[group].result(ADMIN_TIMEOUT_S)
        return {tp.partition: tp.offset for tp in sorted(answer.topic_partitions, key=str)}

    def close(self) -> None:
        """Drop librdkafka's handle (destroyed with its last reference), so it stops
        reconnecting once the recorder is gone."""
        self._admin = None


def open_admin(client: str, bootstrap: str, kafka_python_options: dict[str, Any]) -> GroupAdmin:
    """The admin client of library `client` (kafka-python, aiokafka, confluent, java)."""
    if client == "kafka-python":
        return KafkaPythonAdmin(bootstrap, **kafka_python_options)
    if client == "aiokafka":
        return AiokafkaAdmin(bootstrap)
    if client == "confluent":
        return ConfluentAdmin(bootstrap)
    if client == "java":
        return JavaAdmin(bootstrap)
    raise ValueError(f"unknown client {client!r}")
