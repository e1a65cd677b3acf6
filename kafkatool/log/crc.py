"""CRC-32C (Castagnoli), hardware-accelerated, without the `crc32c` package's import cost.

`import crc32c` pulls in importlib.metadata and argparse (~40 ms, more than dumping a small segment
takes); its C extension alone loads in under a millisecond, so we load just that, and fall back to
the package import if the layout ever changes.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable


def _load() -> Callable[..., int]:
    name = "crc32c._crc32c"
    if name in sys.modules:
        return sys.modules[name].crc32c  # type: ignore[no-any-return]
    try:
        spec = importlib.util.find_spec("crc32c")
        for loc in (spec.submodule_search_locations or []) if spec else []:
            for fname in os.listdir(loc):
                if fname.startswith("_crc32c") and fname.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
                    loader = importlib.machinery.ExtensionFileLoader(name, os.path.join(loc, fname))
                    ext_spec = importlib.util.spec_from_loader(name, loader)
                    if ext_spec is None:
                        continue
                    mod = importlib.util.module_from_spec(ext_spec)
                    loader.exec_module(mod)
                    sys.modules[name] = mod
                    return mod.crc32c  # type: ignore[no-any-return]
    except (ImportError, OSError, AttributeError):
        pass
    import crc32c as _pkg

    return _pkg.crc32c  # type: ignore[no-any-return]


crc32c: Callable[..., int] = _load()
