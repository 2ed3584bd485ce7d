"""The one error type every command turns into a one-line message and a non-zero exit."""


class LanesError(Exception):
    """A user-facing failure: bad input, a missing tool, a refused configuration."""
