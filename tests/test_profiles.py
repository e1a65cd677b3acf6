"""Cluster profiles: --cluster / KAFKATOOL_CLUSTER / default, anywhere on the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafkatool.cli.profiles import hoist_global_options
from kafkatool.config import ConfigError, resolve_cluster

CONFIG = """
default = "zk"
[clusters.zk]
zookeeper = "{zk}"
[clusters.dead]
bootstrap_server = "127.0.0.1:1"
[clusters.dead.properties]
"client.id" = "kafkatool-test"
"""


def test_hoisting_moves_global_options_to_the_front() -> None:
    assert hoist_global_options(["reassign", "--list", "--cluster", "prod"]) == ["--cluster", "prod", "reassign", "--list"]
    assert hoist_global_options(["elect", "--config-file=x.toml", "-h"]) == ["--config-file=x.toml", "elect", "-h"]
    assert hoist_global_options(["dump-log", "--", "--cluster"]) == ["dump-log", "--", "--cluster"]


def test_a_global_option_without_its_value_says_so() -> None:
    """`reassign --list --cluster` used to hoist to `--cluster reassign --list` ("No such option: --list")."""
    for argv in (["reassign", "--list", "--cluster"], ["--cluster", "--zookeeper", "z:1", "reassign"]):
        r = _run(*argv)
        assert (r.returncode, r.stdout, r.stderr) == (2, b"", b"kafkatool: --cluster needs a value\n")


def test_a_profile_names_exactly_one_backend(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[clusters.both]\nbootstrap_server = "b:9092"\nzookeeper = "z:2181"\n')
    with pytest.raises(ConfigError, match=r"\[clusters.both\]: give exactly one of bootstrap_server and zookeeper"):
        resolve_cluster("both", cfg, {})
    r = _run("--config-file", str(cfg), "--cluster", "both", "reassign", "--list")
    assert r.returncode == 2 and r.stderr.decode().count("\n") == 1
    assert "[clusters.both]: give exactly one of bootstrap_server and zookeeper (it has both" in r.stderr.decode()
    cfg.write_text('[clusters.none]\ncommand_config = "x.properties"\n')
    with pytest.raises(ConfigError, match="give exactly one"):
        resolve_cluster("none", cfg, {})


def test_resolution_order(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(CONFIG.format(zk="127.0.0.1:2181"))
    assert resolve_cluster(None, cfg, {}).name == "zk"
    assert resolve_cluster(None, cfg, {"KAFKATOOL_CLUSTER": "dead"}).name == "dead"
    assert resolve_cluster("zk", cfg, {"KAFKATOOL_CLUSTER": "dead"}).name == "zk"
    with pytest.raises(ConfigError, match="not in"):
        resolve_cluster("nope", cfg, {})
    bad = tmp_path / "bad.toml"
    bad.write_text("[clusters.x]\nbootstrap = 1\n")
    with pytest.raises(ConfigError, match="unknown keys"):
        resolve_cluster("x", bad, {})
    assert resolve_cluster(None, None, {"KAFKATOOL_CONFIG": str(tmp_path / "missing.toml")}) is None


def _run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kafkatool", *args], capture_output=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_profile_connects_reassign_to_a_real_zookeeper(tmp_path: Path, zk_chroot: str) -> None:
    from tests.support.zk_cluster import ZkKafka

    cfg = tmp_path / "config.toml"
    cfg.write_text(CONFIG.format(zk=zk_chroot))
    zk = ZkKafka(zk_chroot)
    try:
        for b in (1, 2, 3):
            zk.add_broker(b)
        zk.become_controller(1)
        zk.create_topic("orders", {0: [1, 2], 1: [2, 3]})
    finally:
        zk.close()
    r = _run("reassign", "--list", "--config-file", str(cfg))  # the file's default profile
    assert r.returncode == 0, r.stderr
    r = _run("reassign", "--list", "--config-file", str(cfg), "--cluster", "dead", "--timeout", "1")
    assert r.returncode == 3 and len(r.stderr.splitlines()) == 1 and b"127.0.0.1:1" in r.stderr
    r = _run("--config-file", str(cfg), "elect", "--election-type", "preferred", "--all-topic-partitions",
             "--dry-run", env={"KAFKATOOL_CLUSTER": "zk"})
    assert r.returncode == 0, r.stderr
    r = _run("reassign", "--list", "--config-file", str(cfg), "--cluster", "nope")
    assert r.returncode == 2 and b"'nope' is not in" in r.stderr
