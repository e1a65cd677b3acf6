"""Exit codes and the one-line error convention shared by every command."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1  # mismatches, corruption found, reassignment in progress, lag over the limit
EXIT_USAGE = 2  # bad option, missing or malformed input
EXIT_FAILURE = 3  # cluster unreachable, I/O failure
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT): 128 + 2, as shells report it
EXIT_TERMINATED = 143  # SIGTERM (`kill`): 128 + 15, after the same clean-up as Ctrl-C


class CliError(Exception):
    """An error the CLI reports as one line `kafkatool: <message>` with an exit code."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code
