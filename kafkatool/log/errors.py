"""Exceptions of the log library: each names what is wrong so the CLI can print one line."""

from __future__ import annotations


class LogFormatError(Exception):
    """Base class for anything wrong with bytes on disk."""


class CorruptRecordError(LogFormatError):
    """A batch or record whose framing, size or contents cannot be right."""

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position
        self.partial: list = []  # records decoded before the damage, when decoding a batch


class CorruptIndexError(LogFormatError):
    """An index file that fails the broker's sanity check."""


class CorruptSnapshotError(LogFormatError):
    """A producer-state snapshot with a bad CRC or layout."""


class CheckpointError(LogFormatError):
    """A checkpoint file that does not follow the versioned text layout."""
