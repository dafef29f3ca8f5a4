"""What the KIP-848 relation finds in Kafka's coordinator, pinned (docs/protocol.md §12.12).

KAFKA-20641 (PR apache/kafka#22473, open): a static member that leaves with epoch -2 while it is
in UNREVOKED_PARTITIONS keeps that state with nothing pending revocation, because
`consumerGroupStaticMemberGroupLeave` (GroupMetadataManager.java l.4225-4235 at 4.3.0) clears
the pending revocations and sets the epoch but never the state; Kafka 4.4.0's class file makes
the same builder calls. The spec follows Kafka, so the invariant UnrevokedHasRevocations fails;
the strict xfail turns into a failure the day the spec (with Kafka) sets the state.
"""

from __future__ import annotations

import pytest
from kip848_helpers import beat, first, join, only, send, tps

from groupspec.spec.kip848 import (
    ConsumerGroupConfig,
    ConsumerGroupCoordinatorSpec,
    ConsumerGroupsState,
    MemberState,
    RebalanceTimeoutExpired,
)
from groupspec.spec.kip848.invariants import check_state
from groupspec.spec.kip848.proposed_fixes import KAFKA_20641
from groupspec.vocabulary.errors import InvalidConfigError


def _static_member_revoking() -> ConsumerGroupsState:
    state = only(send(ConsumerGroupsState(), join("s", instance_id="i1"))).state
    state = first(send(state, join("b")), s=tps("t0-0", "t1-0"), b=tps("t0-1")).state
    return only(send(state, beat("s", 2, "t0-0", "t0-1", "t1-0", instance_id="i1"))).state


def test_the_static_member_is_revoking_before_it_leaves():
    state = _static_member_revoking()
    (group,) = state.iter_groups()
    assert group.member("s").state is MemberState.UNREVOKED_PARTITIONS
    assert check_state(state) == []


@pytest.mark.xfail(
    strict=True,
    reason="KAFKA-20641: a static leave (-2) keeps UNREVOKED_PARTITIONS with nothing to revoke",
)
def test_a_static_member_leaving_while_revoking_keeps_the_invariant():
    left = only(send(_static_member_revoking(), beat("s", -2, instance_id="i1"))).state
    assert check_state(left) == []


# KAFKA-20641's proposed fix (apache/kafka#22473, open), applied by `proposed_fixes`.
FIXED = ConsumerGroupCoordinatorSpec(
    ConsumerGroupConfig(assignment_interval_ms=0, proposed_fixes=(KAFKA_20641,))
)


def test_the_proposed_fix_keeps_the_invariant_and_leaves_a_stale_rebalance_timeout():
    left = only(send(_static_member_revoking(), beat("s", -2, instance_id="i1"), spec=FIXED))
    assert check_state(left.state) == []
    (group,) = left.state.iter_groups()
    assert group.member("s").state is MemberState.STABLE
    # The leave does not cancel the revocation's timer; when it fires, the member's epoch is -2
    # and the timer is ignored instead of fencing the member that is away.
    fired = only(send(left.state, RebalanceTimeoutExpired("g", "s"), now_ms=300_000))
    assert "cg_timer.rebalance_timeout_stale" in fired.rules
    (after,) = fired.state.iter_groups()
    assert after.member("s") is not None and check_state(fired.state) == []


def test_an_unknown_proposed_fix_is_refused():
    with pytest.raises(InvalidConfigError, match="proposed_fixes"):
        ConsumerGroupConfig(proposed_fixes=("KAFKA-1",))
