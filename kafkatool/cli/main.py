"""Entry point: import every command module so it registers on the app, then run it."""

from __future__ import annotations

import sys

import click

from kafkatool.cli import dumplog  # noqa: F401  (registers the command)
from kafkatool.cli.app import app
from kafkatool.cli.errors import EXIT_USAGE


def run() -> None:
    """Console-script entry: usage errors exit 2 with one line, like every other input error."""
    try:
        result = app(standalone_mode=False)
    except click.exceptions.UsageError as exc:
        ctx_name = exc.ctx.command_path if exc.ctx else "kafkatool"
        sys.stderr.write(f"kafkatool: {exc.format_message()} (see '{ctx_name} --help')\n")
        sys.exit(EXIT_USAGE)
    except click.exceptions.Abort:
        sys.stderr.write("kafkatool: aborted\n")
        sys.exit(130)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.ClickException as exc:
        sys.stderr.write(f"kafkatool: {exc.format_message()}\n")
        sys.exit(EXIT_USAGE)
    sys.exit(result if isinstance(result, int) else 0)


if __name__ == "__main__":
    run()
