"""One exception for every refusal the service can give, with its protocol code."""

from __future__ import annotations

from typing import Any

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_TURN_INVALID = 3

# Codes that mean "the caller passed something wrong" exit 2, like a bad flag.
_USAGE_CODES = {"INVALID_ARGUMENT"}


class DuelError(Exception):
    """A refusal with a protocol error code and a one-line message."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}

    @property
    def exit_code(self) -> int:
        if self.code == "TURN_INVALID":
            return EXIT_TURN_INVALID
        if self.code in _USAGE_CODES:
            return EXIT_USAGE
        return EXIT_ERROR

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            error["details"] = self.details
        return error


def invalid_argument(message: str, **details: Any) -> DuelError:
    return DuelError("INVALID_ARGUMENT", message, details or None)
