"""Entry point: import every command module so it registers on the app, then run it."""

from __future__ import annotations

import importlib
import importlib.util
import sys

import typer

from kafkatool.cli.app import app
from kafkatool.cli.errors import EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USAGE
from kafkatool.cli.signals import Terminated

# Command name → module, in the order `kafkatool --help` lists them.  Each module registers its
# commands on `app` when imported and keeps heavy imports (kafka-python, kazoo, pyspark) inside the
# commands.
COMMANDS = {
    "dump-log": "dumplog",
    "index": "index",
    "recover": "recover",
    "compact": "compact",
    "reassign": "reassign",
    "elect": "elect",
    "topics": "topics",
    "configs": "configs",
    "offsets": "offsets",
    "spark-scan": "sparkscan",
    "replicas": "replicas",
    "log-dirs": "logdirs",
    "generate": "generate",
    "metadata": "metadata",
    # KRaft-era tools
    "quorum": "quorum",
    "transactions": "transactions",
    "records": "records",
    "features": "features",
    "cluster": "cluster_tool",
}
# Subcommands that live in modules of their own and register on their command's typer app (each
# imports its command's module, never the other way round), imported in this order: the order
# `--help` lists them in.
SUBCOMMAND_MODULES = {
    "offsets": (
        "offsets_export", "offsets_reset", "offsets_end", "offsets_watch", "offsets_owners", "offsets_groups",
        "offsets_streams", "offsets_list",
    ),
}
COMMAND_MODULES = list(dict.fromkeys(COMMANDS.values()))


def _import(name: str) -> None:
    for module in (name, *SUBCOMMAND_MODULES.get(name, ())):
        mod = f"kafkatool.cli.{module}"
        if importlib.util.find_spec(mod) is not None:
            importlib.import_module(mod)


def load_commands(argv: list[str] | None = None) -> None:
    """Import the command modules: only the one being run when argv names it (fast start-up), none
    when --version comes before any help option (it prints and exits before a command is looked
    up), all of them for --help, completion and anything else."""
    if argv is not None:
        command = None
        skip = False
        for a in argv:
            if skip:
                skip = False
            elif a in ("--cluster", "--config-file", "--kafka-release"):
                skip = True  # their value is not the command
            elif a == "--":
                break  # what follows is positional: the command, whatever it looks like
            elif a == "--version":
                return
            elif a in ("-h", "--help") or not a.startswith("-"):
                command = a
                break
        wanted = COMMANDS.get(command or "")
        if wanted:
            _import(wanted)
            return
    for name in COMMAND_MODULES:
        _import(name)


def full_app():  # type: ignore[no-untyped-def]
    """The app with every command registered (for docs generation and in-process tests)."""
    load_commands()
    return app


def run() -> None:
    """Console-script entry: usage errors exit 2 with one line, like every other input error."""
    from kafkatool.cli.errors import CliError
    from kafkatool.cli.profiles import hoist_global_options
    from kafkatool.cli.signals import stop_on_sigterm
    from kafkatool.heap import keep_heap

    keep_heap()  # before any work: batch loops then reuse their memory (kafkatool.heap says why)
    stop_on_sigterm()
    try:
        argv = hoist_global_options(sys.argv[1:])
    except CliError as exc:
        sys.stderr.write(f"kafkatool: {exc}\n")
        sys.exit(exc.code)
    load_commands(argv)
    try:
        result = app(args=argv, prog_name="kafkatool", standalone_mode=False)
    except typer.Abort as exc:
        terminated = isinstance(exc.__cause__, Terminated)
        sys.stderr.write("kafkatool: terminated\n" if terminated else "kafkatool: aborted\n")
        sys.exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:
        # typer vendors click: its usage errors carry format_message() and a ctx.
        if not hasattr(exc, "format_message"):
            raise
        message = exc.format_message()
        if not message:  # no-args help was shown: nothing more to say
            sys.exit(EXIT_USAGE)
        ctx = getattr(exc, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        sys.stderr.write(f"kafkatool: {message}{hint}\n")
        sys.exit(EXIT_USAGE)
    sys.exit(result if isinstance(result, int) else 0)


if __name__ == "__main__":
    run()
