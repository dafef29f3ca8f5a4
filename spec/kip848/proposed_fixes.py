"""Fixes proposed for Kafka's consumer-protocol coordinator and in no release yet, which
`ConsumerGroupConfig.proposed_fixes` applies on top of a profile (docs/protocol.md §12.12).

The specification follows released Kafka, bugs included; a proposed fix lets the model checker
judge a change before it lands: does it restore the property the bug breaks, and does it break
another one? Each fix names the Kafka issue it closes and the pull request that proposes it.
"""

from __future__ import annotations

KAFKA_20641 = "KAFKA-20641"
PROPOSED_FIXES: dict[str, str] = {
    KAFKA_20641: (
        "apache/kafka#22473 (open): a static member that leaves with epoch -2 while in "
        "UNREVOKED_PARTITIONS becomes STABLE, its pending revocations dropped"
    ),
}
