"""The typer application object and the shared error handling every command goes through."""

from __future__ import annotations

import errno
import functools
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from kafkatool import __version__
from kafkatool.cli.errors import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USAGE, CliError
from kafkatool.cli.inputs import CheckedGroup
from kafkatool.cli.signals import Terminated

F = TypeVar("F", bound=Callable[..., Any])

# OSErrors that say the path a user gave cannot be right (exit 2, like a missing file)
_PATH_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.ENOTDIR, errno.EISDIR, errno.ELOOP})

EXIT_CODES_HELP = (
    "Exit codes: 0 ok; 1 findings (corruption, mismatches, reassignment in progress, lag over "
    "--max-lag); 2 usage or input error (bad option, missing file, malformed JSON); 3 failure "
    "(cluster unreachable, I/O error); 4 a group in ERR (offsets watch); 130 interrupted (Ctrl-C); 143 "
    "terminated (kill, after the same clean-up as Ctrl-C)."
)

app = typer.Typer(
    name="kafkatool",
    cls=CheckedGroup,  # every option of every command gets the common checks (cli/inputs.py)
    help="Operations toolkit for Apache Kafka: offline log tools, cluster tools, Spark scans.\n\n"
    + EXIT_CODES_HELP,
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help is plain text: "[clusters.NAME]" is not markup, \b blocks keep their lines
    context_settings={"help_option_names": ["-h", "--help"]},
)

_state: dict = {"debug": bool(os.environ.get("KAFKATOOL_DEBUG")), "cluster": None, "config_file": None}


def _version(value: bool) -> None:
    if value:
        from kafkatool.log.core import CORE

        sys.stdout.write(f"kafkatool {__version__} (core: {CORE})\n")
        raise typer.Exit(0)


def _known_releases() -> str:
    from kafkatool.release import known_text

    return known_text()


@app.callback()
def main_callback(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for unexpected errors."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    cluster: str = typer.Option(
        None,
        "--cluster",
        help="Named cluster from the config file (or set KAFKATOOL_CLUSTER); may be given after the command too.",
    ),
    config_file: str = typer.Option(
        None,
        "--config-file",
        help="Config file with [clusters.NAME] tables (default ~/.config/kafkatool/config.toml).",
    ),
    kafka_release: str = typer.Option(
        None,
        "--kafka-release",
        envvar="KAFKATOOL_KAFKA_RELEASE",
        help=f"Print the text of this Kafka release's tools (one of {_known_releases()}; a patch release prints its "
        "line's text; default: the broker's release for live commands, else the newest); may be given after the "
        "command too.",
    ),
) -> None:
    """kafkatool: everything Kafka's own tools do, byte-exact where they print, and more."""
    if debug:
        _state["debug"] = True
    import logging

    if _state["debug"]:
        logging.basicConfig(level=logging.DEBUG, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    else:
        # kazoo and kafka-python log connection trouble at WARNING; we report it in one line ourselves
        logging.getLogger().addHandler(logging.NullHandler())
    _state["cluster"] = cluster
    _state["config_file"] = config_file
    from kafkatool import release

    release.observe_broker(None)  # each command learns its brokers' release anew
    try:
        note = release.select(kafka_release or None)
    except ValueError as exc:
        fail(f"--kafka-release: {exc}", EXIT_USAGE)
    else:
        if note:
            sys.stderr.write(f"kafkatool: --kafka-release: {note}\n")
            sys.stderr.flush()


def fail(message: str, code: int) -> None:
    """Print `kafkatool: message` on stderr and exit with code."""
    sys.stderr.write(f"kafkatool: {message}\n")
    sys.stderr.flush()
    raise typer.Exit(code)


def handle_errors(func: F) -> F:
    """Turn every exception into one stderr line and a documented exit code (traceback with --debug)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except typer.Exit:
            raise
        except CliError as exc:
            if _state["debug"]:
                traceback.print_exc()
            fail(str(exc), exc.code)
        except BrokenPipeError:
            # The reader went away (`| head`): stop quietly, as Unix tools do.
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            except OSError:
                pass
            raise typer.Exit(0) from None
        except Terminated:
            fail("terminated", EXIT_TERMINATED)
        except KeyboardInterrupt:
            fail("interrupted", EXIT_INTERRUPTED)
        except MemoryError:
            fail(
                "out of memory: the input or options ask for more memory than this machine has", EXIT_FAILURE
            )
        except FileNotFoundError as exc:
            fail(f"{exc.filename or exc}: no such file or directory", EXIT_USAGE)
        except PermissionError as exc:
            fail(f"{exc.filename or exc}: permission denied", EXIT_FAILURE)
        except OSError as exc:
            if exc.errno in _PATH_ERRNOS:  # the path given is wrong, not the system
                fail(f"{exc.filename or exc}: {exc.strerror or exc}", EXIT_USAGE)
            fail(
                f"{getattr(exc, 'filename', None) or ''}{': ' if getattr(exc, 'filename', None) else ''}{exc.strerror or exc}",
                EXIT_FAILURE,
            )
        except Exception as exc:  # the last line of defence: never a traceback by default
            if _state["debug"]:
                traceback.print_exc()
            fail(
                f"unexpected error: {type(exc).__name__}: {exc} (run with --debug for details)", EXIT_FAILURE
            )
        return None

    return wrapper  # type: ignore[return-value]
