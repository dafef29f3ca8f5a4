"""A hand-written breadth-first search of two-phase commit: the yardstick for the engine.

The engine must explore `TwoPhaseModel` with N resource managers in at most 1.5 times the time
of this loop, measured in the same run (issue 17). It is what a programmer would write for this
one model: the state as a flat tuple of small ints, a set of seen states, a deque, the same
steps as TwoPhase.tla (TMRcvPrepared, TMCommit, TMAbort, RMPrepare, RMChooseToAbort,
RMRcvCommitMsg, RMRcvAbortMsg) and the same invariants (TypeOK and Consistent) on every new
state. It keeps no parents and no counterexamples: only what finding the states needs.
"""

from __future__ import annotations

from collections import deque

WORKING, PREPARED, COMMITTED, ABORTED = 0, 1, 2, 3
TM_INIT, TM_COMMITTED, TM_ABORTED = 0, 1, 2
_RM_STATES = frozenset({WORKING, PREPARED, COMMITTED, ABORTED})


class BaselineViolation(AssertionError):
    """An invariant of two-phase commit failed (never, for the correct model)."""


def two_phase_bfs(resource_managers: int) -> tuple[int, int]:
    """Explore two-phase commit with that many RMs; (distinct states, transitions).

    A state is (tm state, commit sent, abort sent, rm 1, ..., rm n), each rm packed as
    state * 4 + sent_prepared * 2 + tm_prepared (the TM's receipt of its Prepared)."""
    start = (TM_INIT, False, False) + (0,) * resource_managers
    seen = {start}
    queue = deque([start])
    transitions = 0
    while queue:
        state = queue.popleft()
        tm, commit, abort = state[0], state[1], state[2]
        rms = state[3:]
        successors = []
        if tm == TM_INIT:
            if all(rm & 1 for rm in rms):
                successors.append((TM_COMMITTED, True, abort, *rms))
            successors.append((TM_ABORTED, commit, True, *rms))
        for index, rm in enumerate(rms):
            rm_state, sent, received = rm >> 2, rm >> 1 & 1, rm & 1
            before, after = state[: 3 + index], state[4 + index :]
            if tm == TM_INIT and sent:
                successors.append((*before, rm | 1, *after))
            if rm_state == WORKING:
                successors.append((*before, PREPARED << 2 | 2 | received, *after))
                successors.append((*before, ABORTED << 2 | sent << 1 | received, *after))
            if commit:
                successors.append((*before, COMMITTED << 2 | sent << 1 | received, *after))
            if abort:
                successors.append((*before, ABORTED << 2 | sent << 1 | received, *after))
        for successor in successors:
            transitions += 1
            if successor not in seen:
                seen.add(successor)
                states = {rm >> 2 for rm in successor[3:]}
                if COMMITTED in states and ABORTED in states:
                    raise BaselineViolation("Consistent")
                if (
                    successor[0] not in (TM_INIT, TM_COMMITTED, TM_ABORTED)
                    or not states <= _RM_STATES
                ):
                    raise BaselineViolation("TypeOK")
                queue.append(successor)
    return len(seen), transitions
