"""One exception for every refusal, with its protocol code, and the one code-to-exit mapping."""

from __future__ import annotations

from typing import Any, Final

from .vocabulary import ErrorCode

__all__ = [
    "EXIT_BUDGET",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_OUTPUT_CLOSED",
    "EXIT_TURN_INVALID",
    "EXIT_USAGE",
    "DuelError",
    "exit_code_for",
    "invalid_argument",
]

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
EXIT_USAGE: Final = 2
EXIT_TURN_INVALID: Final = 3
EXIT_BUDGET: Final = 4  # a seat stopped before a request that could pass its --budget-usd
EXIT_INTERRUPTED: Final = 130
EXIT_OUTPUT_CLOSED: Final = 141  # 128 + SIGPIPE: what a shell shows for a tool whose reader closed the pipe


def exit_code_for(code: str) -> int:
    """The process exit code for an error code (docs/protocol.md section 2, Output)."""
    if code == ErrorCode.TURN_INVALID:
        return EXIT_TURN_INVALID
    if code == ErrorCode.BUDGET_EXCEEDED:
        return EXIT_BUDGET
    if code == ErrorCode.INVALID_ARGUMENT:  # the caller passed something wrong, like a bad flag
        return EXIT_USAGE
    return EXIT_ERROR


class DuelError(Exception):
    """A refusal with a protocol error code and a one-line message."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}

    @property
    def exit_code(self) -> int:
        """The process exit code for this error's code."""
        return exit_code_for(self.code)

    def to_dict(self) -> dict[str, Any]:
        """The error as the protocol's JSON ``error`` object: code, message and any details."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            error["details"] = self.details
        return error


def invalid_argument(message: str, **details: Any) -> DuelError:
    """An ``INVALID_ARGUMENT`` refusal: the caller passed something wrong."""
    return DuelError(ErrorCode.INVALID_ARGUMENT, message, details or None)
