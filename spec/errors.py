"""The specification's own input error: an input that is neither a request nor an event."""

from __future__ import annotations

from groupspec.vocabulary.errors import InputError


class UnknownApiError(InputError):
    """An input that is neither a request the spec models nor one of its internal events."""
