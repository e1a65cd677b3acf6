"""Entry point: import every command module so it registers on the app, then run it."""

from __future__ import annotations

import importlib
import importlib.util
import sys

import typer

from kafkatool.cli.app import app
from kafkatool.cli.errors import EXIT_USAGE

# Command modules in the order `kafkatool --help` lists them.  Each registers its commands on `app`
# when imported and must keep heavy imports (kafka-python, kazoo, pyspark) inside the commands.
COMMAND_MODULES = [
    "dumplog",
    "index",
    "recover",
    "compact",
    "reassign",
    "elect",
    "offsets",
    "sparkscan",
    "generate",
]


def load_commands() -> None:
    for name in COMMAND_MODULES:
        mod = f"kafkatool.cli.{name}"
        if importlib.util.find_spec(mod) is not None:
            importlib.import_module(mod)


load_commands()


def run() -> None:
    """Console-script entry: usage errors exit 2 with one line, like every other input error."""
    try:
        result = app(standalone_mode=False)
    except typer.Abort:
        sys.stderr.write("kafkatool: aborted\n")
        sys.exit(130)
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
