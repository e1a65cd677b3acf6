"""Packages that re-export their modules' names without importing the modules up front (PEP 562).

`from kafkatool.log.decoders import format_offsets_record` (or importing any one module of such a
package) then imports only the module that defines the name: a command pays for the formats it
reads, not for every table of every sibling.  A pure helper at the bottom of the package.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, homes: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose name N lives in module `package.homes[N]`."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)  # found once, then an ordinary attribute
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *homes})

    return __getattr__, __dir__
