"""User-facing errors: messages that name what is wrong and what is accepted, never tracebacks."""


class TextsdcError(Exception):
    """Base class of errors caused by the user's input or choices."""


class DataError(TextsdcError):
    """A data file or its contents cannot be used (unreadable, wrong encoding, missing column, ...)."""


class ConfigError(TextsdcError):
    """A choice is invalid: an unknown method or metric, a knob out of range, a malformed schema."""
