"""The ZooKeeper backend: Kafka 0.8–2.x metadata read and written as znodes (REFERENCE §7).

Brokers register `/brokers/ids/<id>`, topics live in `/brokers/topics/<t>` (replica lists, plus
`adding_replicas`/`removing_replicas` since 2.4), the controller writes
`/brokers/topics/<t>/partitions/<p>/state`, and tools ask the controller for work by creating
`/admin/reassign_partitions` or `/admin/preferred_replica_election`, which it deletes when done.
Dynamic configs are `/config/<topics|brokers>/<name>` plus a sequential `/config/changes` notification.

Reads are issued asynchronously and collected with a deadline (thousands of partition states in
one round trip's time); writes that belong together go in one ZooKeeper transaction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from kafkatool import release
from kafkatool.cluster.backend import (
    Cluster,
    ClusterUnsupported,
    ElectionInProgressError,
    ReassignmentInProgressError,
    UnknownTopicsError,
)
from kafkatool.cluster.connect import ClusterError, ZkDataError, parse_zk_connect, zk_client
from kafkatool.cluster.model import (
    Broker,
    ConfigChange,
    ElectionResult,
    OngoingReassignment,
    PartitionState,
    TopicPartition,
)
from kafkatool.cluster.zkrelease import ReleaseRange, release_range, text_release_of
from kafkatool.jvm import scala_collections

BROKER_IDS = "/brokers/ids"
TOPICS = "/brokers/topics"
CONTROLLER = "/controller"
FEATURE = "/feature"
REASSIGN = "/admin/reassign_partitions"
PREFERRED_ELECTION = "/admin/preferred_replica_election"
CONFIG_CHANGES = "/config/changes"
CONFIG_CHANGE_PREFIX = CONFIG_CHANGES + "/config_change_"


def dumps(obj: Any) -> bytes:
    """Compact JSON as Kafka's Jackson writes znodes."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def topic_path(topic: str) -> str:
    return f"{TOPICS}/{topic}"


def state_path(tp: TopicPartition) -> str:
    return f"{TOPICS}/{tp.topic}/partitions/{tp.partition}/state"


def config_path(entity: str, name: str) -> str:
    return f"/config/{entity}/{name}"


def read_znode(path: str, data: bytes | None, parse: Callable[[bytes], Any]) -> Any:
    """`parse(data)`, or ZkDataError naming the znode and what is wrong with it: a znode Kafka
    never wrote that way is reported, never misread or skipped."""
    try:
        return parse(data if data is not None else b"")
    except json.JSONDecodeError as exc:
        raise ZkDataError(f"ZooKeeper znode {path}: not JSON ({exc.msg} at char {exc.pos}): {_excerpt(data)}") from None
    except UnicodeDecodeError:
        raise ZkDataError(f"ZooKeeper znode {path}: not UTF-8 text: {_excerpt(data)}") from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ZkDataError(f"ZooKeeper znode {path}: {_why(exc)}: {_excerpt(data)}") from None


def _why(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"no {exc.args[0]!r} field"
    text = str(exc)
    if text.startswith("invalid literal for int()"):
        return f"{text.split(': ', 1)[-1]} is not a number"
    return text or type(exc).__name__


def _excerpt(data: bytes | None) -> str:
    text = (data or b"").decode("utf-8", "replace")
    return repr(text if len(text) <= 80 else text[:77] + "...")


def parse_json_object(data: bytes) -> dict[str, Any]:
    info = json.loads(data.decode("utf-8")) if data else {}
    if not isinstance(info, dict):
        raise ValueError(f"a JSON {type(info).__name__}, not an object")
    return info


def parse_broker(broker_id: int, data: bytes) -> Broker:
    """`/brokers/ids/<id>`: host/port (v1), or the first endpoint (v2+, host may be null), rack (v3+)."""
    info = parse_json_object(data)
    host, port = info.get("host"), info.get("port", -1)
    if not host:
        for ep in info.get("endpoints") or []:
            _, _, hp = str(ep).partition("://")
            h, _, p = hp.rpartition(":")
            if h:
                host, port = h.strip("[]"), int(p)
                break
    return Broker(broker_id, host or "", int(port if port is not None else -1), info.get("rack"))


def parse_topic(topic: str, data: bytes) -> dict[str, dict[int, list[int]]]:
    """Topic znode → {"partitions": …, "adding": …, "removing": …} keyed by partition number."""
    info = parse_json_object(data)
    out: dict[str, dict[int, list[int]]] = {}
    for key, name in (("partitions", "partitions"), ("adding_replicas", "adding"), ("removing_replicas", "removing")):
        table = info.get(key) or {}
        if not isinstance(table, dict):
            raise ValueError(f"{key!r} is not an object")
        out[name] = {}
        for p, reps in table.items():
            if not str(p).isdigit():
                raise ValueError(f"{key}: partition {p!r} is not a partition number")
            if not isinstance(reps, list) or not all(isinstance(b, int) for b in reps):
                raise ValueError(f"{key}: partition {p}: replicas {reps!r} are not a list of broker ids")
            out[name][int(p)] = list(reps)
    return out


def parse_state(data: bytes) -> tuple[int, list[int], int]:
    info = parse_json_object(data)
    return int(info.get("leader", -1)), [int(b) for b in info.get("isr", [])], int(info.get("leader_epoch", -1))


def _parse_config(data: bytes) -> dict[str, str]:
    config = parse_json_object(data).get("config") or {}
    if not isinstance(config, dict):
        raise ValueError("'config' is not an object")
    return {k: str(v) for k, v in config.items()}


def reassignment_json(targets: dict[TopicPartition, list[int]]) -> bytes:
    return dumps({
        "version": 1,
        "partitions": [{"topic": tp.topic, "partition": tp.partition, "replicas": list(r)} for tp, r in targets.items()],
    })


def election_json(parts: list[TopicPartition]) -> bytes:
    return dumps({"version": 1, "partitions": [{"topic": tp.topic, "partition": tp.partition} for tp in parts]})


def parse_partition_list(data: bytes) -> list[tuple[TopicPartition, list[int] | None]]:
    info = parse_json_object(data)
    out = []
    for p in info.get("partitions") or []:
        reps = p.get("replicas")
        out.append((TopicPartition(p["topic"], int(p["partition"])), [int(b) for b in reps] if reps is not None else None))
    return out


class ZkCluster(Cluster):
    kind = "zookeeper"
    #: The releases the live brokers may run, as their znodes show (`zkrelease`); None until read.
    release_range: ReleaseRange | None = None

    def __init__(self, client: Any, connect: str, timeout: float) -> None:
        self.client = client
        self.source = f"zookeeper:{connect}"
        self.connect_string = connect
        self.timeout = timeout

    @classmethod
    def connect(cls, connect: str, timeout: float) -> ZkCluster:
        """Connect, and unless `--kafka-release` chose the text, learn the brokers' release range from
        their znodes: the text is the Scala tools' unless the znodes prove 3.7+ (`zkrelease`)."""
        parse_zk_connect(connect)
        cluster = cls(zk_client(connect, timeout), connect, timeout)
        if release.explicit() is None:
            try:
                cluster.release_range = cluster.read_release_range()
            except ClusterError:  # e.g. an ACL on /feature: no evidence; the command's own reads decide
                cluster.release_range = ReleaseRange(None)
            cluster.broker_release = text_release_of(cluster.release_range)
        return cluster

    def read_release_range(self) -> ReleaseRange:
        """The live brokers' release range from `/brokers/ids/*`, `/controller` and `/feature` (one round trip
        after listing the brokers); znodes that are not Kafka's JSON are no evidence, never an error here."""
        ids = [i for i in self._children(BROKER_IDS) if i.lstrip("-").isdigit()]
        datas = self._get_many([f"{BROKER_IDS}/{i}" for i in ids] + [CONTROLLER, FEATURE])
        registrations = {int(i): d for i, d in zip(ids, datas, strict=False) if d is not None}
        return release_range(registrations, datas[-2], datas[-1])

    # -- plumbing -----------------------------------------------------------------------------

    def _wait(self, async_result: Any, what: str) -> Any:
        from kazoo.exceptions import ConnectionLoss, NoAuthError, SessionExpiredError
        from kazoo.handlers.threading import KazooTimeoutError

        try:
            return async_result.get(timeout=self.timeout)
        except KazooTimeoutError:
            raise ClusterError(f"ZooKeeper at {self.connect_string} did not answer within {self.timeout:g}s ({what})") from None
        except (ConnectionLoss, SessionExpiredError):
            raise ClusterError(f"lost the connection to ZooKeeper at {self.connect_string} ({what})") from None
        except NoAuthError:
            raise ClusterError(f"ZooKeeper refused access to {what}: not authorized") from None

    def _get(self, path: str) -> tuple[bytes, Any] | None:
        from kazoo.exceptions import NoNodeError

        try:
            return self._wait(self.client.get_async(path), path)  # type: ignore[no-any-return]
        except NoNodeError:
            return None

    def _children(self, path: str) -> list[str]:
        from kazoo.exceptions import NoNodeError

        try:
            return list(self._wait(self.client.get_children_async(path), path))
        except NoNodeError:
            return []

    def _get_many(self, paths: list[str]) -> list[bytes | None]:
        """Issue every read at once, then collect: one round trip for thousands of znodes."""
        from kazoo.exceptions import NoNodeError

        pending = [(p, self.client.get_async(p)) for p in paths]
        out: list[bytes | None] = []
        for path, res in pending:
            try:
                out.append(self._wait(res, path)[0])
            except NoNodeError:
                out.append(None)
        return out

    def _commit(self, build: Callable[[Any], None], what: str) -> list[Any]:
        tx = self.client.transaction()
        build(tx)
        return list(self._wait(tx.commit_async(), what))

    def close(self) -> None:
        try:
            self.client.stop()
            self.client.close()
        except Exception:  # closing a dead session must not mask the real error
            pass

    # -- reads --------------------------------------------------------------------------------

    def brokers(self) -> list[Broker]:
        names = self._children(BROKER_IDS)
        bad = [i for i in names if not i.lstrip("-").isdigit()]
        if bad:
            raise ZkDataError(f"ZooKeeper znode {BROKER_IDS}/{bad[0]}: {bad[0]!r} is not a broker id")
        ids = sorted(int(i) for i in names)
        datas = self._get_many([f"{BROKER_IDS}/{i}" for i in ids])
        return [read_znode(f"{BROKER_IDS}/{i}", d, partial(parse_broker, i))
                for i, d in zip(ids, datas, strict=True) if d is not None]

    def controller(self) -> int | None:
        got = self._get(CONTROLLER)
        if not got or not got[0]:
            return None
        return int(read_znode(CONTROLLER, got[0], lambda b: int(parse_json_object(b).get("brokerid", -1))))

    def topics(self) -> list[str]:
        return sorted(self._children(TOPICS))

    def _topic_znodes(self, topics: list[str], missing_ok: bool = False) -> dict[str, dict[str, dict[int, list[int]]]]:
        datas = self._get_many([topic_path(t) for t in topics])
        out = {}
        for t, d in zip(topics, datas, strict=True):
            if d is None:
                if missing_ok:  # deleted between listing and reading
                    continue
                raise UnknownTopicsError(f"Topic {t} not found.")
            out[t] = read_znode(topic_path(t), d, partial(parse_topic, t))
        return out

    def partition_states(self, topics: Iterable[str] | None = None) -> dict[TopicPartition, PartitionState]:
        names = list(dict.fromkeys(topics)) if topics is not None else self.topics()
        znodes = self._topic_znodes(names)
        tps = [TopicPartition(t, p) for t in names for p in sorted(znodes[t]["partitions"])]
        states = self._get_many([state_path(tp) for tp in tps])
        out: dict[TopicPartition, PartitionState] = {}
        for tp, data in zip(tps, states, strict=True):
            z = znodes[tp.topic]
            leader, isr, epoch = read_znode(state_path(tp), data, parse_state) if data else (-1, [], -1)
            out[tp] = PartitionState(
                replicas=z["partitions"][tp.partition],
                leader=leader,
                isr=isr,
                leader_epoch=epoch,
                adding=z["adding"].get(tp.partition, []),
                removing=z["removing"].get(tp.partition, []),
            )
        return out

    def assignment(self, topics: Iterable[str] | None = None) -> dict[TopicPartition, list[int]]:
        """Replica lists from the topic znodes alone (no partition state reads)."""
        names = list(dict.fromkeys(topics)) if topics is not None else self.topics()
        znodes = self._topic_znodes(names)
        return {TopicPartition(t, p): list(znodes[t]["partitions"][p]) for t in names for p in sorted(znodes[t]["partitions"])}

    def znode_order(self, topics: Iterable[str]) -> list[TopicPartition]:
        """The partitions of `topics` as their znodes list them (missing topics left out): Kafka 2.x's
        tools keep that order in Maps of up to 4 entries (`reassign_21`)."""
        names = list(dict.fromkeys(topics))
        znodes = self._topic_znodes(names, missing_ok=True)
        return [TopicPartition(t, p) for t in names if t in znodes for p in znodes[t]["partitions"]]

    def legacy_reassignment(self) -> dict[TopicPartition, list[int]]:
        """The targets in `/admin/reassign_partitions` (empty when no reassignment is running)."""
        got = self._get(REASSIGN)
        if not got:
            return {}
        return {tp: reps or [] for tp, reps in read_znode(REASSIGN, got[0], parse_partition_list)}

    def ongoing_reassignments(self) -> dict[TopicPartition, OngoingReassignment]:
        legacy = self.legacy_reassignment()
        out: dict[TopicPartition, OngoingReassignment] = {}
        for topic, z in self._topic_znodes(self.topics(), missing_ok=True).items():  # no state znodes needed
            for p, replicas in z["partitions"].items():
                tp = TopicPartition(topic, p)
                target = legacy.get(tp)
                adding, removing = z["adding"].get(p, []), z["removing"].get(p, [])
                if adding or removing:
                    out[tp] = OngoingReassignment(list(replicas), list(adding), list(removing), target)
                elif target is not None:
                    out[tp] = OngoingReassignment(
                        list(replicas),
                        [b for b in target if b not in replicas],
                        [b for b in replicas if b not in target],
                        target,
                    )
        for tp, target in legacy.items():  # targets for partitions that no longer exist
            out.setdefault(tp, OngoingReassignment([], [], [], target))
        return out

    def describe_configs(self, entity: str, names: Iterable[str]) -> dict[str, dict[str, str]]:
        names = list(names)
        datas = self._get_many([config_path(entity, n) for n in names])
        out = {}
        for n, d in zip(names, datas, strict=True):
            out[n] = read_znode(config_path(entity, n), d, _parse_config)
        return out

    # -- writes -------------------------------------------------------------------------------

    def _ensure_parents(self, entities: Iterable[str]) -> None:
        for path in {CONFIG_CHANGES, "/admin", *(f"/config/{e}" for e in entities)}:
            self._wait(self.client.ensure_path_async(path), path)

    def _add_config_ops(self, tx: Any, changes: list[ConfigChange]) -> None:
        """Config znode writes (version-checked) and their change notifications, into `tx`."""
        current = {}
        for ch in changes:
            got = self._get(config_path(ch.entity, ch.name))
            current[(ch.entity, ch.name)] = got
        for ch in changes:
            got = current[(ch.entity, ch.name)]
            old = {} if not got else read_znode(config_path(ch.entity, ch.name), got[0], _parse_config)
            data = dumps({"version": 1, "config": ch.apply(old)})
            path = config_path(ch.entity, ch.name)
            if got is None:
                tx.create(path, data)
            else:
                tx.set_data(path, data, version=got[1].version)
            tx.create(CONFIG_CHANGE_PREFIX, dumps({"version": 2, "entity_path": f"{ch.entity}/{ch.name}"}), sequence=True)

    @staticmethod
    def _raise_tx_errors(results: list[Any], what: str) -> None:
        from kazoo.exceptions import BadVersionError, NodeExistsError, RolledBackError

        errors = [r for r in results if isinstance(r, Exception) and not isinstance(r, RolledBackError)]
        if not errors:
            return
        err = errors[0]
        if isinstance(err, BadVersionError):
            raise ClusterError(f"{what}: a config znode changed while writing; nothing was changed, try again")
        if isinstance(err, NodeExistsError):
            raise ClusterError(f"{what}: a znode appeared while writing; nothing was changed, try again")
        raise ClusterError(f"{what}: ZooKeeper refused the transaction ({type(err).__name__}); nothing was changed")

    def alter_configs(self, changes: list[ConfigChange]) -> None:
        if not changes:
            return
        self._ensure_parents({c.entity for c in changes})
        results = self._commit(lambda tx: self._add_config_ops(tx, changes), "config update")
        self._raise_tx_errors(results, "config update")

    def start_reassignment(
        self, targets: dict[TopicPartition, list[int]], throttles: list[ConfigChange]
    ) -> dict[TopicPartition, str | None]:
        from kazoo.exceptions import NodeExistsError

        self._ensure_parents({c.entity for c in throttles})

        def build(tx: Any) -> None:
            self._add_config_ops(tx, throttles)
            tx.create(REASSIGN, reassignment_json(targets))

        results = self._commit(build, "start reassignment")
        if results and isinstance(results[-1], NodeExistsError):
            raise ReassignmentInProgressError("a partition reassignment is in progress (/admin/reassign_partitions exists)")
        self._raise_tx_errors(results, "start reassignment")
        return dict.fromkeys(targets)

    def elect_leaders(self, election_type: str, parts: list[TopicPartition] | None) -> ElectionResult:
        from kazoo.exceptions import NodeExistsError

        if election_type != "preferred":
            raise ClusterUnsupported("unclean leader election needs --bootstrap-server (Kafka 2.4+ brokers)")
        if parts is None:
            parts = sorted(self.partition_states())
        data = election_json(parts)
        self._wait(self.client.ensure_path_async("/admin"), "/admin")
        try:
            self._wait(self.client.create_async(PREFERRED_ELECTION, data), PREFERRED_ELECTION)
        except NodeExistsError:
            got = self._get(PREFERRED_ELECTION)
            listed = [tp for tp, _ in read_znode(PREFERRED_ELECTION, got[0], parse_partition_list)] if got else []
            running = scala_collections.topic_partition_set_order(listed, scala="2.12")  # Kafka 2.x's Set
            raise ElectionInProgressError(
                "Preferred replica leader election currently in progress for "
                f"{','.join(map(str, running))}. Aborting operation"
            ) from None
        return ElectionResult(znode_json=data.decode("utf-8"))

    # -- generic access for the topics/configs/owners tools (kafkatool.cluster.topics_backend, …) --------

    def read_many(self, paths: list[str]) -> list[bytes | None]:
        """Data of many znodes in one round trip (None where missing)."""
        return self._get_many(paths)

    def read(self, path: str) -> bytes | None:
        got = self._get(path)
        return None if got is None else got[0]

    def read_versioned(self, path: str) -> tuple[bytes | None, int]:
        """Data and version of a znode ((None, -1) when missing), for version-checked writes."""
        got = self._get(path)
        return (None, -1) if got is None else (got[0], got[1].version)

    def create_if_absent(self, path: str, data: bytes) -> bool:
        """Create a persistent znode; False when it exists already."""
        from kazoo.exceptions import NodeExistsError

        try:
            self._wait(self.client.create_async(path, data), path)
        except NodeExistsError:
            return False
        return True

    def children(self, path: str) -> list[str]:
        """Children of a znode ([] when it does not exist)."""
        return self._children(path)

    def commit(self, build: Callable[[Any], None], what: str) -> None:
        """Run the writes `build` adds to one ZooKeeper transaction; all or nothing, one-line errors."""
        self._raise_tx_errors(self._commit(build, what), what)

    def ensure_paths(self, paths: Iterable[str]) -> None:
        for path in paths:
            self._wait(self.client.ensure_path_async(path), path)
