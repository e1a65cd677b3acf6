"""Every option of every command, fed malformed values: exit 2 and one stderr line naming the option.

The cases come from the app's own parameter list, so an option added tomorrow is swept too.  Each
case runs in-process through the console-script entry (`run`), with nothing else on the command line:
the malformed value must be refused while the options are read, before any file or cluster is touched
(an option checked only later would fail with another message, or reach for a cluster and time out).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, get_args, get_origin

import pytest
import typer

from kafkatool.cli import inputs
from kafkatool.cli.main import full_app, run

BAD_CONNECT = ["127.0.0.1:abc", "127.0.0.1:99999", "host name:1"]


def _kind(param: Any) -> str:
    desc = param.type_descriptor
    if desc.is_choice:
        return "choice"
    ann = desc.annotation
    if get_origin(ann) is list:
        ann = get_args(ann)[0]
    return getattr(ann, "__name__", str(ann))


def _malformed(param: Any) -> list[str]:
    kind = _kind(param)
    signed = inputs._signed(param)
    if kind == "int":
        java_int = [str(2**31)] if inputs.VALUE_CHECKS.get(max(param.opts, key=len)) is inputs._java_int else []
        return ["abc", "", str(2**63)] + ([] if signed else ["-1"]) + java_int  # wrong type, empty, huge, negative
    if kind == "float":
        durations = ["0", "1e300"] if any(o in inputs.VALUE_CHECKS for o in param.opts) else []
        return ["abc", "", "nan", "inf"] + ([] if signed else ["-0.5"]) + durations
    if kind == "choice":
        return ["", "no-such-choice"]
    if kind in ("str", "Path", "PosixPath"):
        values = [""]
        if any(o in inputs.TEXT_CHECKS for o in param.opts):
            values += BAD_CONNECT
        return values
    return []


def _cases() -> list[Any]:
    root = typer.main.get_command(full_app())
    cases = []

    def walk(cmd: Any, path: list[str]) -> None:
        for param in cmd.params:
            if param.type_descriptor.annotation is bool or getattr(param, "is_flag", False):
                continue
            if param.param_type_name == "option":
                opt = max(param.opts, key=len)
                for value in _malformed(param):
                    cases.append(pytest.param(path, [opt, value], opt, id=f"{' '.join(path) or '-'} {opt}={value!r}"))
            else:
                for value in _malformed(param):
                    cases.append(pytest.param(path, [value], param.name, id=f"{' '.join(path)} <{param.name}>={value!r}"))
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            walk(sub, [*path, name])

    walk(root, [])
    return cases


CASES = _cases()


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str],
         cwd: Path) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)  # a value that slipped through must not write into the checkout
    monkeypatch.setattr(sys, "argv", ["kafkatool", *argv])
    monkeypatch.setenv("KAFKATOOL_CONFIG", "/nonexistent/kafkatool-config.toml")
    monkeypatch.delenv("KAFKATOOL_CLUSTER", raising=False)
    with pytest.raises(SystemExit) as exc:
        run()
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_every_command_has_cases() -> None:
    swept = {tuple(c.values[0]) for c in CASES}
    for command in ("dump-log", "recover", "compact", "reassign", "elect", "spark-scan", "generate", "offsets"):
        assert (command,) in swept, command
    assert ("index", "verify") in swept and ("offsets", "end") in swept


@pytest.mark.parametrize(("path", "args", "name"), CASES)
def test_malformed_value_is_a_one_line_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, path: list[str],
    args: list[str], name: str,
) -> None:
    start = time.monotonic()
    code, out, err = _run(monkeypatch, capsys, [*path, *args], tmp_path)
    assert time.monotonic() - start < 12  # refused at once, not after the 15 s default --timeout
    assert code == 2, (code, err)
    assert err.count("\n") == 1 and err.startswith("kafkatool: "), err
    assert "Traceback" not in err and "unexpected error" not in err, err
    assert name in err, f"the error does not say which option is wrong: {err}"


@pytest.mark.parametrize("option", ["--zookeeper", "--bootstrap-server"])
@pytest.mark.parametrize("command", [["reassign", "--list"], ["elect", "--all-topic-partitions"], ["offsets", "--all-groups"]])
def test_bad_port_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                   option: str, command: list[str]) -> None:
    code, _out, err = _run(monkeypatch, capsys, [*command, option, "127.0.0.1:abc", "--timeout", "2"], tmp_path)
    assert (code, err.count("\n")) == (2, 1), err
    assert "'127.0.0.1:abc': the port must be a number from 1 to 65535" in err


def test_bad_port_from_a_cluster_profile_is_a_usage_error(tmp_path: Path) -> None:
    """A connect string from the config file is checked as strictly as one on the command line."""
    import subprocess

    (tmp_path / "c.toml").write_text('[clusters.p]\nbootstrap_server = "127.0.0.1:abc"\n')
    p = subprocess.run([sys.executable, "-m", "kafkatool", "--config-file", str(tmp_path / "c.toml"), "--cluster", "p",
                        "reassign", "--list", "--timeout", "2"], capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stderr.count("\n")) == (2, 1), p.stderr
    assert "the port must be a number from 1 to 65535" in p.stderr and "unexpected error" not in p.stderr


def test_compact_buffer_larger_than_memory(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    from kafkatool.ops.generate import GenerateSpec, generate_partition

    generate_partition(tmp_path, GenerateSpec(records=20))
    ram = inputs.physical_memory()
    assert ram is not None
    for args in (["--buffer-size", str(4 * ram)], ["--config", f"log.cleaner.dedupe.buffer.size={4 * ram}"]):
        code, out, err = _run(monkeypatch, capsys, ["compact", *args, "--dry-run", str(tmp_path / "demo-0")], tmp_path)
        assert (code, out, err.count("\n")) == (2, "", 1), err
        assert "exceeds the memory available" in err and "unexpected error" not in err


def test_out_of_memory_is_one_line_not_unexpected(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    import kafkatool.ops.generate as ops_generate  # the command imports it when it runs

    def exhausted(*_args: Any) -> None:
        raise MemoryError

    monkeypatch.setattr(ops_generate, "generate_partition", exhausted)
    code, _out, err = _run(monkeypatch, capsys, ["generate", str(tmp_path / "logs")], tmp_path)
    assert (code, err) == (3, "kafkatool: out of memory: the input or options ask for more memory than this machine has\n")


# --------------------------------------------------------------------------------------------------
# Text that is well-typed but wrong, on offline commands that get far enough to use it: an answer
# (0, 1 or a one-line usage error), never a crash.  (This found `compact --segment-bytes` and
# `--buffer-size 1e999` crashing.)

NONSENSE = ["abc", "-5", "1e999", "nan", "9" * 23, "x" * 300]
OFFLINE = {
    ("dump-log",): lambda d, t: ["dump-log", "--files", str(d / "00000000000000000000.log")],
    ("recover",): lambda d, t: ["recover", "--dry-run", str(d)],
    ("compact",): lambda d, t: ["compact", "--dry-run", str(d)],
    ("spark-scan",): lambda d, t: ["spark-scan", "--engine", "local", str(d)],
    ("index", "verify"): lambda d, t: ["index", "verify", str(d)],
    ("index", "dump"): lambda d, t: ["index", "dump", str(d / "00000000000000000000.index")],
    ("generate",): lambda d, t: ["generate", str(t / "g"), "--records", "5"],
}
SKIP = {"--output", "--salvage"}  # they write where they are told


def _offline_cases() -> list[Any]:
    root = typer.main.get_command(full_app())
    cases = []
    for path in OFFLINE:
        cmd = root
        for part in path:
            cmd = cmd.commands[part]
        for param in cmd.params:
            if param.param_type_name != "option" or param.type_descriptor.annotation is bool:
                continue
            opt = max(param.opts, key=len)
            if opt not in SKIP:
                cases += [pytest.param(path, opt, v, id=f"{' '.join(path)} {opt}={v[:12]!r}") for v in NONSENSE]
    return cases


@pytest.fixture(scope="module")
def txn_partition(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from kafkatool.ops.generate import GenerateSpec, generate_partition

    logs = tmp_path_factory.mktemp("logs")
    return generate_partition(logs, GenerateSpec(records=60, transactional=True, abort_ratio=0.5,
                                                 segment_bytes=2000)).partition_dir


@pytest.mark.parametrize(("path", "opt", "value"), _offline_cases())
def test_wrong_text_is_answered_not_crashed(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path, txn_partition: Path, path: tuple[str, ...], opt: str,
                                            value: str) -> None:
    code, _out, err = _run(monkeypatch, capsys, [*OFFLINE[path](txn_partition, tmp_path), opt, value], tmp_path)
    assert code in (0, 1, 2), (code, err)
    assert "unexpected error" not in err and "Traceback" not in err, err
    if code == 2:
        assert err.count("\n") == 1, err


def test_compact_takes_sizes_with_units(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                        tmp_path: Path, txn_partition: Path) -> None:
    code, _out, err = _run(monkeypatch, capsys, ["compact", "--dry-run", "--segment-bytes", "128MiB", "--buffer-size",
                                                 "1MiB", str(txn_partition)], tmp_path)
    assert code == 0, err


@pytest.mark.parametrize("command", [["recover", "--dry-run"], ["index", "verify"], ["dump-log", "--files"]])
def test_impossible_paths_are_usage_errors(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "file").write_text("x")
    for bad in (tmp_path / ("x" * 300), tmp_path / "file" / "00000000000000000000.log"):
        code, _out, err = _run(monkeypatch, capsys, [*command, str(bad)], tmp_path)
        assert (code, err.count("\n")) == (2, 1), err
        assert "unexpected error" not in err
