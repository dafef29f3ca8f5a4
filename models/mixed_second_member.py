"""A second classic client of the mixed world (`second_classic`): a client that joins the group
once, as a real one does, and then stops.

Its JoinGroup names no member id; the coordinator answers MEMBER_ID_REQUIRED with the member id
it is to use, and the client's second JoinGroup names that id (KIP-394, JoinGroup v4 and
later). After that the client sends nothing more: it stands for a second classic consumer, or a
Kafka Connect worker, that crashed or hung after joining, so its member is parked in the join
phase, or joined and never synced, until the coordinator's timers remove it (the world fires a
timer only for members no running client holds, and this client holds none). Its answers go to
no client of the world: a JoinGroup parked in a rebalance is answered later, to a client that
no longer reads.

Two kinds, by the protocol type of its JoinGroup:

- "consumer": a classic consumer (protocol type "consumer", the range assignor, subscribing to
  every topic). A classic group then holds two members, which group.consumer.max.size 1 makes
  too large to upgrade, and whose join parked in the group's rebalance an upgrade must answer;
  inside a consumer group it is a second classic member, which group.classic.max.size 1 keeps
  the group from downgrading when the KIP-848 consumer leaves.
- "connect": a Kafka Connect worker (protocol type "connect"). When it joins first, the classic
  group it creates is of a type a KIP-848 consumer's join cannot upgrade.

Everything it sends is legal; the world's properties judge its outcomes as they judge the two
consumers' (its member is one more member of the group the invariants read).
"""

from __future__ import annotations

from groupspec.spec.assignment import Subscription
from groupspec.spec.consumer_protocol import CONSUMER_PROTOCOL_TYPE, encode_subscription
from groupspec.vocabulary.requests import JoinGroupProtocol, JoinGroupRequest

SECOND_KINDS = ("consumer", "connect")
# The connection the second client's requests arrive on.
SECOND_CONNECTION = "second"
# Its client.id, which the coordinator folds into the member ids it hands out.
SECOND_CLIENT_ID = "second"
# A Connect worker's protocol type and the name of one of its protocols (Connect's
# "sessioned" connect.protocol); the coordinator reads neither the name nor the metadata.
CONNECT_PROTOCOL_TYPE = "connect"
CONNECT_PROTOCOL = "sessioned"
CONNECT_METADATA = b"worker-metadata"
# Inside the broker's session-timeout range; the rebalance timeout as the classic consumer's.
SESSION_TIMEOUT_MS = 10_000
REBALANCE_TIMEOUT_MS = 20_000


def second_join(
    kind: str, group_id: str, topics: tuple[str, ...], member_id: str
) -> JoinGroupRequest:
    """The JoinGroup the second client of `kind` sends to `group_id`, naming `member_id` (empty
    for its first join)."""
    if kind == CONNECT_PROTOCOL_TYPE:
        protocol_type = CONNECT_PROTOCOL_TYPE
        protocol = JoinGroupProtocol(CONNECT_PROTOCOL, CONNECT_METADATA)
    else:
        protocol_type = CONSUMER_PROTOCOL_TYPE
        protocol = JoinGroupProtocol("range", encode_subscription(Subscription(topics)))
    return JoinGroupRequest(
        group_id,
        member_id,
        protocol_type,
        (protocol,),
        SESSION_TIMEOUT_MS,
        REBALANCE_TIMEOUT_MS,
        client_id=SECOND_CLIENT_ID,
    )
