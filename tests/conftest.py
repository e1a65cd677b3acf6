"""Shared test fixtures: where the real-broker fixtures live, and generated logs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KAFKATOOL_SHARED", REPO.parent / "shared")).resolve()
FIXTURES = SHARED / "fixtures"
KAFKA_LOGS = FIXTURES / "kafka-logs"
GOLDENS = FIXTURES / "dump-log"


def require_fixtures() -> Path:
    """Skip (with the reason) when the shared real-broker fixtures are not beside the repo."""
    if not (KAFKA_LOGS.is_dir() and GOLDENS.is_dir()):
        pytest.skip(f"shared fixtures not found at {FIXTURES} (set KAFKATOOL_SHARED to the shared/ directory)")
    return FIXTURES


@pytest.fixture
def fixtures() -> Path:
    return require_fixtures()


@pytest.fixture
def kafka_logs() -> Path:
    require_fixtures()
    return KAFKA_LOGS
