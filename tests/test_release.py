"""The release model: which Kafka releases' text kafkatool knows, and what it does with the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkatool import release
from kafkatool.release import KNOWN_RELEASES, NEWEST, Release, resolve
from tests.support.cli import run_console


def test_known_releases_are_2_1_the_3_3_line_and_every_4_x_up_to_4_4() -> None:
    assert list(map(str, KNOWN_RELEASES)) == ["2.1", "3.3", "4.0", "4.1", "4.2", "4.3", "4.4"]
    assert NEWEST == Release(4, 4) == max(KNOWN_RELEASES)
    assert list(KNOWN_RELEASES) == sorted(KNOWN_RELEASES)


@pytest.mark.parametrize(
    "text, served", [("4.3", "4.3"), ("4.3.7", "4.3"), ("4.0.0", "4.0"), ("3.3.1", "3.3"), ("2.1.1", "2.1")]
)
def test_a_known_line_or_a_patch_of_it_is_served_silently(text: str, served: str) -> None:
    assert resolve(text) == (release.parse_release(served), None)


@pytest.mark.parametrize("text, served", [("3.5", "3.3"), ("3.9.1", "3.3"), ("2.4", "2.1")])
def test_an_unmodelled_line_between_known_ones_is_served_by_the_one_before_with_a_note(
    text: str, served: str
) -> None:
    rel, note = resolve(text)
    assert str(rel) == served
    assert note is not None and f"Kafka {served}'s" in note and text[:3] in note


@pytest.mark.parametrize("text", ["9.9", "4.5", "1.0", "5.0.1"])
def test_a_release_outside_the_known_range_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="2.1, 3.3, 4.0, 4.1, 4.2, 4.3, 4.4"):
        resolve(text)


def test_offline_default_is_the_newest() -> None:
    before = release.explicit()
    release.select(None)
    try:
        assert release.text_release() == NEWEST
    finally:
        release.select(before)


@pytest.mark.parametrize("text", ["9.9", "4.5", "1.0"])
def test_cli_refuses_an_unknown_release_with_one_line_and_exit_2(text: str, tmp_path: Path) -> None:
    f = tmp_path / "00000000000000000000.index"
    f.write_bytes(b"")
    r = run_console("--kafka-release", text, "dump-log", "--files", str(f))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == (
        f"kafkatool: --kafka-release: Kafka {text} is not a release kafkatool knows "
        "(it knows 2.1, 3.3, 4.0, 4.1, 4.2, 4.3, 4.4)\n"
    )


def test_cli_notes_which_text_serves_an_unmodelled_line(tmp_path: Path) -> None:
    f = tmp_path / "00000000000000000000.index"
    f.write_bytes(b"")
    r = run_console("--kafka-release", "3.5", "dump-log", "--files", str(f))
    quiet = run_console("--kafka-release", "3.3", "dump-log", "--files", str(f))
    assert (r.returncode, r.stdout) == (quiet.returncode, quiet.stdout)
    assert r.stderr == (
        "kafkatool: --kafka-release: Kafka 3.5's tool text is not modelled: printing Kafka 3.3's "
        "(the newest known before it)\n" + quiet.stderr
    )
    patch = run_console("--kafka-release", "4.3.7", "dump-log", "--files", str(f))
    plain = run_console("--kafka-release", "4.3", "dump-log", "--files", str(f))
    assert (patch.returncode, patch.stdout, patch.stderr) == (plain.returncode, plain.stdout, plain.stderr)


def test_help_lists_the_releases() -> None:
    r = run_console("--help")
    assert "3.3, 4.0, 4.1, 4.2, 4.3, 4.4" in " ".join(r.stdout.split())
