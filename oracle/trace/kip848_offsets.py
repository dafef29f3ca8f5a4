"""OffsetCommit and OffsetFetch of consumer-protocol groups as the consumer-protocol oracle reads
and compares them (oracle/trace/kip848.py; the rules are spec/kip848/offsets.py).

From version 10 (KIP-848) both APIs name topics by id instead of by name. The specification
speaks of topics by name, so a v10 body is read with each topic id replaced by the name the
trace header's topics give it (`TraceHeader.consumer_groups`), and then as version 9, which
carries the same fields (v9 already has the member id and epoch). Its response is compared the
same way. A topic id the header does not name makes the request unmodelled: the oracle skips it
and counts it.
"""

from __future__ import annotations

from typing import Any

from groupspec.spec.kip848.config import TopicMetadata
from groupspec.wire.group_apis import (
    OFFSET_COMMIT,
    OFFSET_FETCH,
    Body,
    UnmodelledRequest,
    read_requests,
)

from .comparison import comparable

OFFSET_APIS = (OFFSET_COMMIT, OFFSET_FETCH)
# The first version of both APIs that names topics by id (KIP-848), and the version whose
# fields a v10 body is read and compared as (the last one naming topics by name).
TOPIC_ID_VERSION = 10
BY_NAME_VERSION = TOPIC_ID_VERSION - 1


def offset_groups(body: dict[str, Any]) -> set[str]:
    """The groups an OffsetCommit or OffsetFetch body names (OffsetFetch v8+ batches them)."""
    named = {body["group_id"]} if isinstance(body.get("group_id"), str) else set()
    for group in body.get("groups") or ():
        if isinstance(group, dict) and isinstance(group.get("group_id"), str):
            named.add(group["group_id"])
    return named


def judged_version(version: int) -> int:
    """The version an offset request of `version` is read and its response compared as."""
    return min(version, BY_NAME_VERSION)


def read_offset_request(
    api_key: int,
    version: int,
    body: Body,
    client_id: str | None,
    client_host: str,
    topics: tuple[TopicMetadata, ...],
) -> tuple[Any, ...]:
    """The vocabulary's request(s) of an OffsetCommit or OffsetFetch body, topics by name.

    Raises `UnmodelledRequest` for a topic id `topics` does not name (and whatever
    `read_requests` raises)."""
    if version >= TOPIC_ID_VERSION:
        body = by_topic_name(api_key, body, topics, request=True)
    return read_requests(api_key, judged_version(version), body, client_id, client_host)


def offset_form(api_key: int, version: int, body: Body, topics: tuple[TopicMetadata, ...]) -> Any:
    """What is compared of an OffsetCommit or OffsetFetch response (`comparison.comparable`),
    topics by name; None when a topic id in it is not the header's."""
    if version >= TOPIC_ID_VERSION:
        try:
            body = by_topic_name(api_key, body, topics, request=False)
        except UnmodelledRequest:
            return None
    return comparable(api_key, judged_version(version), body)


def by_topic_name(
    api_key: int, body: Body, topics: tuple[TopicMetadata, ...], request: bool
) -> Body:
    """`body` (a v10+ request or response) with each topic's id replaced by its name."""
    names = {topic.topic_id: topic.name for topic in topics}

    def renamed(entries: Any) -> Any:
        if entries is None:
            return None
        out = []
        for entry in entries:
            topic_id = entry.get("topic_id")
            if topic_id not in names:
                raise UnmodelledRequest(f"topic id {topic_id} is not one of the trace header's")
            out.append({**entry, "name": names[topic_id]})
        return out

    if api_key == OFFSET_COMMIT:
        return {**body, "topics": renamed(body.get("topics"))}
    key = "groups"
    if not request and key not in body:
        return body
    return {
        **body,
        key: [{**group, "topics": renamed(group.get("topics"))} for group in body.get(key) or ()],
    }
