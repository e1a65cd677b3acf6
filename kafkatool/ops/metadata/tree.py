"""The metadata shell's path tree over an image, and its `ls`, `cat`, `tree` and `find` (Kafka 4.0's
`MetadataShell` in non-interactive mode: the image node classes of `org.apache.kafka.image.node`, the
shell's `RootShellNode`/`LocalShellNode`, `GlobVisitor`/`GlobComponent` and the command handlers).

What the shell prints is reproduced with its quirks: errors go to standard output and are not failures,
children list in `String.compareTo` order, `/image/features/zkMigrationState` is listed but has no node
(so `cat` says it does not exist, `tree` prints its name alone, and `find` stops there with an error,
as Kafka's does: `FindError` carries the text printed so far).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kafkatool.ops.metadata import text as T
from kafkatool.ops.metadata.image import SCRAM_MECHANISMS, Image

SHELL_RELEASE = ("4.0.0", "985bc99521dd22bb")  # /local/version and /local/commitId: Kafka 4.0.0's


class FindError(RuntimeError):
    """`find` met a listed child without a node: Kafka's shell dies here; `output` is what it printed."""

    def __init__(self, message: str, output: str) -> None:
        super().__init__(message)
        self.output = output


class Node:
    """`MetadataNode`: a directory (child names, children) or a file (its text)."""

    def is_dir(self) -> bool:
        return True

    def child_names(self) -> list[str]:
        return []

    def child(self, name: str) -> Node | None:
        return None

    def print(self, out: Printer) -> None:
        for name in sorted(self.child_names()):
            out.enter(name)
            c = self.child(name)
            if c is not None:
                c.print(out)
            out.leave()


class Leaf(Node):
    def __init__(self, text: str) -> None:
        self.text = text

    def is_dir(self) -> bool:
        return False

    def print(self, out: Printer) -> None:
        out.output(self.text)


class Dir(Node):
    """A directory whose children are computed on demand (as Kafka's node classes are)."""

    def __init__(self, names: Callable[[], Iterable[str]], get: Callable[[str], Node | None]) -> None:
        self._names = names
        self._get = get

    def child_names(self) -> list[str]:
        return list(self._names())

    def child(self, name: str) -> Node | None:
        return self._get(name)


class Printer:
    """`ShellNodePrinter`: two spaces per level, `name:` on entering a node."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.level = 0

    def enter(self, name: str) -> None:
        self.lines.append(f"{'  ' * self.level}{name}:")
        self.level += 1

    def leave(self) -> None:
        self.level -= 1

    def output(self, text: str) -> None:
        self.lines.append(f"{'  ' * self.level}{text}")


def _fixed(children: dict[str, Callable[[], Node]]) -> Dir:
    return Dir(lambda: children.keys(), lambda n: children[n]() if n in children else None)


def _int_keyed(d: dict[int, object], render: Callable[[object], str]) -> Dir:
    def get(name: str) -> Node | None:
        try:
            key = _java_int(name)
        except ValueError:
            return None
        return Leaf(render(d[key])) if key in d else None

    return Dir(lambda: [str(k) for k in d], get)


def _java_int(s: str) -> int:
    """`Integer.valueOf`: an optional sign and ASCII digits, within int32."""
    if not re.fullmatch(r"[+-]?[0-9]+", s):
        raise ValueError(s)
    v = int(s)
    if not -(2**31) <= v < 2**31:
        raise ValueError(s)
    return v


def _topic_node(t: dict) -> Dir:
    parts = t["partitions"]

    def get(name: str) -> Node | None:
        if name == "name":
            return Leaf(t["name"])
        if name == "id":
            return Leaf(T.uuid_text(t["id"]))
        try:
            pid = _java_int(name)
        except ValueError:
            return None
        return Leaf(T.partition_text(parts[pid])) if pid in parts else None

    return Dir(lambda: ["name", "id", *(str(p) for p in parts)], get)


def _topics_node(img: Image) -> Dir:
    by_id = {T.uuid_text(k): v for k, v in img.topics.items()}
    by_name = img.topics_by_name
    return _fixed(
        {
            "byName": lambda: Dir(
                lambda: by_name.keys(), lambda n: _topic_node(by_name[n]) if n in by_name else None
            ),
            "byId": lambda: Dir(
                lambda: by_id.keys(), lambda n: _topic_node(by_id[n]) if n in by_id else None
            ),
        }
    )


def _config_name(key: tuple[int, str]) -> str:
    type_name = T.CONFIG_RESOURCE_TYPES.get(key[0], "UNKNOWN")
    return type_name if key[1] == "" else f"{type_name}:{key[1]}"


def _resource_from_name(name: str) -> tuple[int, str] | None:
    """`ConfigurationsImageNode.resourceFromName`: the first type (declaration order) the name starts with."""
    for type_id, type_name in T.CONFIG_RESOURCE_TYPES.items():
        if name.startswith(type_name):
            rest = name[len(type_name) :]
            if rest == "":
                return (type_id, "")
            if rest.startswith(":"):
                return (type_id, rest[1:])
            return None
    return None


def _configs_node(img: Image) -> Dir:
    def get(name: str) -> Node | None:
        key = _resource_from_name(name)
        data = img.configs.get(key) if key is not None else None
        if data is None:
            return None
        return Dir(lambda: data.keys(), lambda k: Leaf(data[k]) if k in data else None)

    return Dir(lambda: [_config_name(k) for k in img.configs], get)


def _quota_entity_name(entity: tuple[tuple[str, str | None], ...]) -> str:
    """`ClientQuotasImageNode.clientQuotaEntityToString`: clientId, ip, user, each escaped."""
    d = dict(entity)

    def esc(v: str | None) -> str:
        return str(v).replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    parts = [
        f"{label}({esc(d[key])})"
        for key, label in (("client-id", "clientId"), ("ip", "ip"), ("user", "user"))
        if key in d
    ]
    return "_".join(parts)


def _quotas_node(img: Image) -> Dir:
    by_name = {_quota_entity_name(e): q for e, q in img.client_quotas.items()}
    return Dir(
        lambda: by_name.keys(),
        lambda n: (
            Dir(
                lambda: by_name[n].keys(),
                lambda k: Leaf(T.double_text(by_name[n][k])) if k in by_name[n] else None,
            )
            if n in by_name
            else None
        ),
    )


def _features_node(img: Image) -> Dir:
    def get(name: str) -> Node | None:
        if name == "metadataVersion":
            return Leaf(T.metadata_version(img.metadata_version))
        if name.startswith("finalized_"):
            return Leaf(str(img.finalized.get(name[len("finalized_") :], 0)))
        return None  # zkMigrationState: listed, never a node (Kafka 4.0)

    return Dir(
        lambda: ["metadataVersion", "zkMigrationState", *(f"finalized_{k}" for k in img.finalized)], get
    )


def _scram_text(d: dict) -> str:
    return (
        f"ScramCredentialData(salt={bytes(d['salt']).hex()}, storedKey={bytes(d['storedKey']).hex()}, "
        f"serverKey={bytes(d['serverKey']).hex()}, iterations={d['iterations']})"
    )


def _scram_node(img: Image) -> Dir:
    names = {v: k for k, v in SCRAM_MECHANISMS.items()}

    def get(name: str) -> Node | None:
        if name not in names:
            return None
        users = img.scram.get(names[name], {})
        return Dir(lambda: users.keys(), lambda u: Leaf(_scram_text(users[u])) if u in users else None)

    return Dir(lambda: list(names), get)


def _token_text(d: dict) -> str:
    """`DelegationTokenDataNode.print` (its parentheses as Kafka has them)."""
    return (
        f"DelegationTokenDatatokenId={d['tokenId']}(owner={d['owner']}(tokenRequester={d['requester']}"
        f"(renewers={' '.join(d['renewers'])}, issueTimestamp={d['issueTimestamp']}, "
        f"maxTimestamp={d['maxTimestamp']}), expiryTimestamp={d['expirationTimestamp']}"
    )


def image_node(img: Image) -> Dir:
    """`MetadataImageNode`."""
    acls = {T.uuid_text(k): v for k, v in img.acls.items()}
    p = img.provenance
    return _fixed(
        {
            "provenance": lambda: Leaf(
                f"offset {p.offset}, epoch {p.epoch}, time {T.iso_zoned_utc(p.time_ms)}"
            ),
            "features": lambda: _features_node(img),
            "cluster": lambda: _fixed(
                {
                    "brokers": lambda: _int_keyed(img.brokers, T.broker_text),  # type: ignore[arg-type]
                    "controllers": lambda: _int_keyed(img.controllers, T.controller_text),  # type: ignore[arg-type]
                }
            ),
            "topics": lambda: _topics_node(img),
            "configs": lambda: _configs_node(img),
            "clientQuotas": lambda: _quotas_node(img),
            "producerIds": lambda: _fixed({"nextProducerId": lambda: Leaf(str(img.next_producer_id))}),
            "acls": lambda: _fixed(
                {
                    "byId": lambda: Dir(
                        lambda: acls.keys(), lambda n: Leaf(T.acl_text(acls[n])) if n in acls else None
                    ),
                }
            ),
            "scram": lambda: _scram_node(img),
            "delegationToken": lambda: Dir(
                lambda: img.tokens.keys(),
                lambda n: Leaf(_token_text(img.tokens[n])) if n in img.tokens else None,
            ),
        }
    )


def root_node(img: Image) -> Dir:
    """`RootShellNode`: `/local` (the shell's own release) and `/image`."""
    return _fixed(
        {
            "local": lambda: _fixed(
                {"version": lambda: Leaf(SHELL_RELEASE[0]), "commitId": lambda: Leaf(SHELL_RELEASE[1])}
            ),
            "image": lambda: image_node(img),
        }
    )


# --------------------------------------------------------------------------------------------------
# globs and commands


def _split(path: str) -> list[str]:
    """`CommandUtils.splitPath` then `stripDotPathComponents`."""
    out: list[str] = []
    for c in path.split("/"):
        if c in ("", "."):
            continue
        if c == "..":
            if out:
                out.pop()
        else:
            out.append(c)
    return out


def glob_regex(glob: str) -> re.Pattern[str] | None:
    """`GlobComponent.toRegularExpression`: None for a literal component (or a malformed glob)."""
    out = ["^"]
    literal = True
    group = False
    i = 0
    while i < len(glob):
        c = glob[i]
        i += 1
        if c == "?":
            literal = False
            out.append(".")
        elif c == "*":
            literal = False
            out.append(".*")
        elif c == "\\":
            if i == len(glob):
                return None  # a trailing backslash: Java's pattern fails to compile, the shell takes it literally
            out.append(re.escape(glob[i]))
            i += 1
        elif c == "{":
            if group:
                return None  # "Can't nest glob groups": the shell treats the component as literal
            literal = False
            out.append("(?:(?:")
            group = True
        elif c == "," and group:
            literal = False
            out.append(")|(?:")
        elif c == "}" and group:
            literal = False
            out.append("))")
            group = False
        else:
            out.append(re.escape(c))
    if group or literal:
        return None
    out.append("$")
    try:
        return re.compile("".join(out), re.S)
    except re.error:
        return None


@dataclass(frozen=True)
class Match:
    path: tuple[str, ...]
    node: Node

    @property
    def last(self) -> str:
        return self.path[-1] if self.path else "/"


def visit(root: Node, target: str) -> list[Match]:
    """`GlobVisitor`: every node the (absolute or root-relative) glob names, in sorted order."""
    comps = _split(target)
    out: list[Match] = []

    def walk(i: int, node: Node, path: tuple[str, ...]) -> None:
        if i >= len(comps):
            out.append(Match(path, node))
            return
        comp = comps[i]
        pattern = glob_regex(comp)
        if not node.is_dir():
            return
        if pattern is None:
            c = node.child(comp)
            if c is not None:
                walk(i + 1, c, (*path, comp))
            return
        for name in sorted(node.child_names()):
            if pattern.match(name):
                c = node.child(name)
                if c is None:
                    raise FindError(
                        f"Expected {name} to be a valid child of {_abs(path)}, but it was not.", ""
                    )
                walk(i + 1, c, (*path, name))

    walk(0, root, ())
    return out


def _effective(paths: list[str]) -> list[str]:
    return [p for p in paths if p] or ["."]


def ls(root: Node, targets: list[str]) -> str:
    """`LsCommandHandler` without a terminal: one entry per line, a `name:` intro per directory when
    several are listed or files came first."""
    lines: list[str] = []
    files: list[str] = []
    dirs: list[tuple[str, list[str]]] = []
    for target in _effective(targets):
        found = visit(root, target)
        if not found:
            lines.append(f"ls: {target}: no such file or directory.")
        for m in found:
            if m.node.is_dir():
                dirs.append((m.last, sorted(m.node.child_names())))
            else:
                files.append(m.last)
    lines.extend(files)
    need_intro = bool(files) or len(dirs) > 1
    first_intro = not files
    for name, children in dirs:
        if not children:
            continue
        if need_intro:
            if not first_intro:
                lines.append("")
            lines.append(f"{name}:")
            first_intro = False
        lines.extend(children)
    return "".join(line + "\n" for line in lines)


def _print_targets(root: Node, targets: list[str], command: str, refuse_dirs: bool) -> str:
    """What cat and tree share: each target's nodes printed, a missing one named (`refuse_dirs`: cat's
    "Is a directory" in place of a directory's tree)."""
    lines: list[str] = []
    for target in targets:
        found = visit(root, target)
        if not found:
            lines.append(f"{command}: {target}: No such file or directory.")
        for m in found:
            if refuse_dirs and m.node.is_dir():
                lines.append(f"{command}: {target}: Is a directory")
                continue
            p = Printer()
            m.node.print(p)
            lines.extend(p.lines)
    return "".join(line + "\n" for line in lines)


def cat(root: Node, targets: list[str]) -> str:
    """`CatCommandHandler`."""
    return _print_targets(root, targets, "cat", refuse_dirs=True)


def tree(root: Node, targets: list[str]) -> str:
    """`TreeCommandHandler`."""
    return _print_targets(root, targets, "tree", refuse_dirs=False)


def find(root: Node, paths: list[str]) -> str:
    """`FindCommandHandler`: each path, then its descendants depth first, sorted.  Raises `FindError`
    (with the text so far) where a listed child has no node, as Kafka's does."""
    lines: list[str] = []

    def walk(path: str, node: Node) -> None:
        lines.append(path)
        if node.is_dir():
            for name in sorted(node.child_names()):
                nxt = path + name if path == "/" else f"{path}/{name}"
                c = node.child(name)
                if c is None:
                    raise FindError(
                        f"Expected {name} to be a valid child of {path}, but it was not.",
                        "".join(line + "\n" for line in lines),
                    )
                walk(nxt, c)

    for path in _effective(paths):
        found = visit(root, path)
        if not found:
            lines.append(f"find: {path}: no such file or directory.")
        for m in found:
            walk(path, m.node)
    return "".join(line + "\n" for line in lines)


COMMANDS: dict[str, Callable[[Node, list[str]], str]] = {"cat": cat, "find": find, "ls": ls, "tree": tree}


def run_shell_words(root: Node, words: list[str]) -> str:
    """A non-interactive shell command line (`kafka-metadata-shell.sh -s FILE WORDS...`): the command's
    output, or argparse4j's `invalid choice` line for the interactive-only commands and others."""
    if not words:
        return ""
    cmd, args = words[0], words[1:]
    if cmd not in COMMANDS:
        return f"invalid choice: '{cmd}' (choose from 'cat', 'find', 'ls', 'tree')\n"
    if cmd in ("cat", "tree") and not args:
        return "too few arguments\n"
    return COMMANDS[cmd](root, args)


# --------------------------------------------------------------------------------------------------
# rows for --format json|ndjson|csv (kafkatool's own: the shell has only text)


def _abs(path: tuple[str, ...]) -> str:
    return "/" + "/".join(path)


def _kind(node: Node) -> str:
    return "dir" if node.is_dir() else "file"


def ls_rows(root: Node, targets: list[str]) -> list[dict]:
    """One row per entry listed: the directory's path, the entry's name and path, and its type."""
    rows: list[dict] = []
    for target in _effective(targets):
        for m in visit(root, target):
            if not m.node.is_dir():
                rows.append({"dir": _abs(m.path[:-1]), "name": m.last, "path": _abs(m.path), "type": "file"})
                continue
            for name in sorted(m.node.child_names()):
                c = m.node.child(name)
                rows.append(
                    {
                        "dir": _abs(m.path),
                        "name": name,
                        "path": _abs((*m.path, name)),
                        "type": "missing" if c is None else _kind(c),
                    }
                )
    return rows


def find_rows(root: Node, paths: list[str]) -> list[dict]:
    """Every node under the paths (a listed child without a node comes as type `missing`)."""
    rows: list[dict] = []

    def walk(path: tuple[str, ...], node: Node | None) -> None:
        rows.append({"path": _abs(path), "type": "missing" if node is None else _kind(node)})
        if node is not None and node.is_dir():
            for name in sorted(node.child_names()):
                walk((*path, name), node.child(name))

    for p in _effective(paths):
        for m in visit(root, p):
            walk(m.path, m.node)
    return rows


def cat_rows(root: Node, targets: list[str]) -> list[dict]:
    rows: list[dict] = []
    for target in targets:
        for m in visit(root, target):
            if not m.node.is_dir():
                p = Printer()
                m.node.print(p)
                rows.append({"path": _abs(m.path), "text": "\n".join(p.lines)})
    return rows


def tree_json(node: Node) -> object:
    """A node as JSON: a directory an object of its children (null for a listed child without a node),
    a file its text."""
    if not node.is_dir():
        p = Printer()
        node.print(p)
        return "\n".join(p.lines)
    out: dict[str, object] = {}
    for name in sorted(node.child_names()):
        c = node.child(name)
        out[name] = None if c is None else tree_json(c)
    return out


def tree_objects(root: Node, targets: list[str]) -> dict[str, object]:
    return {_abs(m.path): tree_json(m.node) for t in targets for m in visit(root, t)}
