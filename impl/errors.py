"""The implementation's own input errors (Kafka's error codes are in groupspec.vocabulary)."""

from __future__ import annotations

from groupspec.vocabulary.errors import InputError


class UnknownRequestError(InputError):
    """An object handed to `Coordinator.handle` that is not a request the coordinator serves."""


class TimerNotArmedError(InputError):
    """A timer event fired explicitly although that timer is not armed."""


class PartitionStateError(InputError):
    """A partition ownership change that does not fit the partition's current state."""


class PolicyError(RuntimeError):
    """The policy object answered outside the options it was given (a bug in the policy)."""
