"""kafka-python message classes for KIP-848's group APIs, built from this package's schemas."""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage

from groupspec.wire import schemas


class ConsumerGroupHeartbeatRequest(ApiMessage, load_json=schemas):  # type: ignore[call-arg]
    """ConsumerGroupHeartbeat (key 68) request, v0-v1."""


class ConsumerGroupHeartbeatResponse(ApiMessage, load_json=schemas):  # type: ignore[call-arg]
    """ConsumerGroupHeartbeat (key 68) response, v0-v1."""


class ConsumerGroupDescribeRequest(ApiMessage, load_json=schemas):  # type: ignore[call-arg]
    """ConsumerGroupDescribe (key 69) request, v0-v1."""


class ConsumerGroupDescribeResponse(ApiMessage, load_json=schemas):  # type: ignore[call-arg]
    """ConsumerGroupDescribe (key 69) response, v0-v1."""
