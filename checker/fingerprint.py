"""Stable state fingerprints (DESIGN decision 3).

A fingerprint is a 64-bit BLAKE2b digest of the state's canonical encoding: its `repr`, or the
bytes its `canonical_bytes()` returns when it has that method (a state made of large shared
parts encodes itself as its parts' remembered digests, see `WorldState.canonical_bytes`).
States are frozen values whose `repr` is canonical (sorted tuples, no sets or dicts), so equal
states get equal fingerprints in every process, on every machine, and across runs; Python's
built-in `hash` is salted per process for strings and cannot be used. With 64 bits the chance of
any collision among 10^7 states is about 3 in a million.
"""

from __future__ import annotations

from hashlib import blake2b

FINGERPRINT_BYTES = 8


def fingerprint(state: object) -> int:
    """The stable 64-bit fingerprint of an immutable state."""
    encode = getattr(state, "canonical_bytes", None)
    data = encode() if encode is not None else repr(state).encode("utf-8")
    digest = blake2b(data, digest_size=FINGERPRINT_BYTES).digest()
    return int.from_bytes(digest, "big")


def check_canonical(state: object, path: str = "state") -> None:
    """Raise TypeError naming the first value whose repr is not canonical (a set or a dict).

    Used by tests of every model: a model whose states hold sets would fingerprint equal states
    differently in different processes, silently breaking deduplication.
    """
    if isinstance(state, (set, frozenset, dict)):
        raise TypeError(f"{path} is a {type(state).__name__}; states must use sorted tuples")
    if isinstance(state, (tuple, list)):
        for index, item in enumerate(state):
            check_canonical(item, f"{path}[{index}]")
        return
    fields = getattr(state, "__dataclass_fields__", None)
    if fields is not None:
        for name in fields:
            check_canonical(getattr(state, name), f"{path}.{name}")
