"""User-facing errors: messages that name what is wrong and what is accepted, never tracebacks."""


class TextsdcError(Exception):
    """Base class of errors caused by the user's input or choices. The message is kept to one line: a line
    break or other control character that came from the user's data (a column name, a value) is shown
    escaped (``\\n``), so the CLI's one-line error and the dashboard's message stay whole."""

    def __init__(self, message: object = "", *args: object) -> None:
        super().__init__(one_line(str(message)), *args)


_CONTROL = {i: f"\\x{i:02x}" for i in (*range(0x20), 0x7F)} | {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}


def one_line(text: str) -> str:
    """``text`` with line breaks, tabs and other control characters written as escapes."""
    return text.translate(_CONTROL)


class DataError(TextsdcError):
    """A data file or its contents cannot be used (unreadable, wrong encoding, missing column, ...)."""


class ConfigError(TextsdcError):
    """A choice is invalid: an unknown method or metric, a knob out of range, a malformed schema."""


def os_error_message(exc: OSError, folder: object = None) -> str:
    """One line for an error of the machine rather than of the input (a full disk, a folder that cannot be
    written): on which file (else in which ``folder``), what failed, and what to do."""
    import errno

    place = exc.filename or folder
    where = f"{place}: " if place else ""
    reason = exc.strerror or str(exc) or type(exc).__name__
    hint = {
        errno.ENOSPC: "the disk is full; free some space or write to another disk",
        errno.EDQUOT: "the disk quota is used up; free some space or write to another disk",
        errno.EACCES: "choose a folder you can write to",
        errno.EPERM: "choose a folder you can write to",
        errno.EROFS: "choose a folder you can write to",
    }.get(exc.errno or 0)
    return one_line(f"{where}{reason}" + (f" ({hint})" if hint else ""))
