"""Which rebalance protocol the consumer follows (reference §4, ConsumerCoordinator constructor)."""

from __future__ import annotations

from collections.abc import Sequence

from groupspec.vocabulary.errors import InvalidConfigError

from ..assignment import RebalanceProtocol
from ..assignors.base import Assignor


def select_rebalance_protocol(assignors: Sequence[Assignor]) -> RebalanceProtocol:
    """The highest protocol every configured assignor supports (COOPERATIVE beats EAGER).

    Raises InvalidConfigError when the assignors share no protocol, as Kafka refuses to build
    such a consumer.
    """
    if not assignors:
        raise InvalidConfigError("at least one assignor is needed to select a rebalance protocol")
    common = set(assignors[0].supported_protocols)
    for assignor in assignors[1:]:
        common &= set(assignor.supported_protocols)
    if not common:
        names = sorted(assignor.name for assignor in assignors)
        raise InvalidConfigError(f"assignors {names} have no commonly supported rebalance protocol")
    return max(common)
