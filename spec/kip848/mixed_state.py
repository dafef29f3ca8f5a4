"""The joint state of a coordinator that holds groups of both kinds (docs/protocol.md §12.15):
the classic coordinator's state (`spec/state.py`) and the consumer-protocol groups
(`state.ConsumerGroupsState`), side by side.

Kafka keeps one map from group id to a group of either type (`GroupMetadataManager.groups`); the
spec keeps the two states it already has and holds that a group id lives in at most one of them
(`group_kinds_disjoint`). The step of a mixed coordinator is the consumer-protocol `Step` with
the classic settings beside it, since a downgrade checks group.classic.max.size.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from groupspec.vocabulary.requests import RequestRef
from groupspec.vocabulary.responses import Response, ResponseBody

from ..config import CoordinatorConfig
from ..state import CoordinatorState, Group
from ..step import _Chooser
from .config import ConsumerGroupConfig
from .state import ConsumerGroup, ConsumerGroupsState
from .step import Step


class GroupKind(Enum):
    """Which coordinator holds a group: Kafka's GroupType, for the two types modelled."""

    CLASSIC = "classic"
    CONSUMER = "consumer"


@dataclass(frozen=True)
class MixedState:
    """Every group of one coordinator: classic groups and consumer-protocol groups."""

    classic: CoordinatorState
    consumer: ConsumerGroupsState

    def kind_of(self, group_id: str) -> GroupKind | None:
        """The kind of the group called `group_id`, or None when the coordinator holds none."""
        if self.consumer.group(group_id) is not None:
            return GroupKind.CONSUMER
        if self.classic.group(group_id) is not None:
            return GroupKind.CLASSIC
        return None

    def with_consumer_group(self, group: ConsumerGroup) -> MixedState:
        """The state with `group` stored as a consumer group (and no classic group of its id)."""
        return MixedState(
            self.classic.without_group(group.group_id), self.consumer.with_group(group)
        )

    def with_classic_group(self, group: Group) -> MixedState:
        """The state with `group` stored as a classic group (and no consumer group of its id)."""
        return MixedState(
            self.classic.with_group(group), self.consumer.without_group(group.group_id)
        )

    def with_consumer(self, consumer: ConsumerGroupsState) -> MixedState:
        """The state with the consumer-protocol side replaced."""
        return replace(self, consumer=consumer)


def group_kinds_disjoint(state: MixedState) -> list[str]:
    """Violations of: no group id is held both as a classic and as a consumer group."""
    classic_ids = {group.group_id for group in state.classic.groups}
    return [
        f"group {group.group_id!r} is both a classic and a consumer group"
        for group in state.consumer.iter_groups()
        if group.group_id in classic_ids
    ]


class MixedStep(Step):
    """The consumer-protocol step of a mixed coordinator, which also knows the classic settings."""

    def __init__(
        self,
        config: ConsumerGroupConfig,
        classic_config: CoordinatorConfig,
        now_ms: int,
        chooser: _Chooser,
    ) -> None:
        super().__init__(config, now_ms, chooser)
        self.classic_config = classic_config
        self.classic_responses: list[Response] = []

    def respond_classic(self, ref: RequestRef, body: ResponseBody) -> None:
        """Send `body`, a classic API's response, as the answer to the request `ref`."""
        self.classic_responses.append(Response(ref, body))
