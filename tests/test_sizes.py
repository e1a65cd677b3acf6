"""One size grammar (`kafkatool.sizes`) for `compact --buffer-size/--segment-bytes` and `spark-scan --split-size`.

The oracles are the two parsers the commands had before they shared one, kept here verbatim in
substance: whatever either accepted must still be accepted, with the same number of bytes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kafkatool.cli.main import full_app
from kafkatool.log.record import Record
from kafkatool.log.writer import SegmentWriter, encode_v2_batch
from kafkatool.sizes import SizeError, parse_size

MIB = 1 << 20

# -- the two grammars of before ------------------------------------------------------------------

_COMPACT_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2, "mib": 1024**2,
                  "g": 1024**3, "gb": 1024**3, "gib": 1024**3}


def old_compact(text: str) -> int | None:
    """cli/compact.py's parser: None where it refused."""
    t = text.strip().lower().replace("_", "")
    num = t.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = t[len(num):]
    if not num or unit not in _COMPACT_UNITS:
        return None
    try:
        value = int(float(num) * _COMPACT_UNITS[unit])
    except ValueError:
        return None
    return value if value > 0 else None


_SPLIT = re.compile(r"^\s*(\d+)\s*([kmgt]?)(i?b)?\s*$", re.IGNORECASE)
_SPLIT_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def old_split(text: str) -> int | None:
    """spark/planning.py's parser: None where it refused."""
    m = _SPLIT.match(text)
    if not m:
        return None
    value = int(m.group(1)) * _SPLIT_UNITS[m.group(2).lower()]
    return value if value > 0 else None


def new(text: str) -> int | None:
    try:
        return parse_size(text)
    except SizeError:
        return None


# -- the grammar -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("134217728", 128 * MIB),
        ("128m", 128 * MIB),
        ("128MiB", 128 * MIB),
        ("128 mb", 128 * MIB),
        ("1g", 1024 * MIB),
        ("512KB", 512 * 1024),
        ("1.5MiB", 3 * MIB // 2),
        ("134_217_728", 128 * MIB),
        ("1e3", 1000),
        ("2t", 2 << 40),
        ("1TiB", 1 << 40),
        ("100b", 100),
        (" 4k ", 4096),
    ],
)
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "huge", "12 parsecs", "0", "-5m", "0.0001", "1 28", "0x10", "nan", "inf", "5kk"])
def test_not_sizes(text: str) -> None:
    with pytest.raises(SizeError, match="is not a size|must be positive"):
        parse_size(text)


def test_ints_pass_through() -> None:
    assert parse_size(2048) == 2048
    with pytest.raises(SizeError):
        parse_size(0)


_TEXT = st.one_of(
    st.text(alphabet="0123456789.e+-_ kmgtibKMGTIB", max_size=12),
    st.builds(
        lambda n, frac, sp, unit: f"{n}{frac}{sp}{unit}",
        st.integers(0, 10**6),
        st.sampled_from(["", ".", ".5", ".25", "e2", "e-1"]),
        st.sampled_from(["", " "]),
        st.sampled_from(["", "b", "ib", "k", "kb", "kib", "m", "mb", "mib", "g", "gb", "gib", "t", "tb", "tib",
                         "K", "MiB", "GB"]),
    ),
)


@settings(max_examples=600, deadline=None)
@given(_TEXT)
def test_union_of_the_old_grammars(text: str) -> None:
    """Whatever either old parser accepted is accepted, with the same bytes."""
    before = old_split(text) or old_compact(text)
    if before is not None:
        assert new(text) == before, text


# -- both commands' options --------------------------------------------------------------------------

runner = CliRunner()
app = full_app()


@pytest.fixture(scope="module")
def partition(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("sizes") / "logs" / "t-0"
    d.mkdir(parents=True)
    w = SegmentWriter(d, 0, 4096)
    for i in range(20):
        w.append(encode_v2_batch([Record(i, 1_700_000_000_000 + i, b"k%d" % (i % 3), b"v", ())], i), i,
                 1_700_000_000_000 + i, i)
    w.close()
    return d


@pytest.mark.parametrize("size", ["1mib", "1_048_576", "1.5MiB", "1m", "2048k"])
def test_compact_buffer_size_takes_the_grammar(partition: Path, size: str) -> None:
    result = runner.invoke(app, ["compact", str(partition), "--dry-run", "--quiet", "--buffer-size", size,
                                 "--segment-bytes", "1g"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("option", ["--buffer-size", "--segment-bytes"])
def test_compact_size_errors_name_the_option(partition: Path, option: str) -> None:
    result = runner.invoke(app, ["compact", str(partition), "--dry-run", "--quiet", option, "huge"])
    assert result.exit_code == 2
    assert result.stderr == (
        f"kafkatool: {option}: 'huge' is not a size (examples: 134217728, 128m, 128MiB, 1g)\n"
    )


@pytest.mark.parametrize("size", ["2048", "1.5MiB", "64_000", "1kib", "1 MB"])
def test_spark_scan_split_size_takes_the_grammar(partition: Path, size: str) -> None:
    result = runner.invoke(app, ["spark-scan", str(partition.parent), "--engine", "local", "--format", "json",
                                 "--quiet", "--split-size", size])
    assert result.exit_code == 0, result.output
    assert '"records":20' in result.stdout


def test_spark_scan_size_error_names_the_option(partition: Path) -> None:
    result = runner.invoke(app, ["spark-scan", str(partition.parent), "--engine", "local", "--quiet",
                                 "--split-size", "0"])
    assert result.exit_code == 2
    assert result.stderr == "kafkatool: --split-size: size must be positive, got '0'\n"
