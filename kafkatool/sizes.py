"""Byte counts as operators write them (`134217728`, `128m`, `128MiB`, `1.5g`, `512KB`): one grammar.

`compact --buffer-size/--segment-bytes` and `spark-scan --split-size` (and the `kafka-log` source's
`splitSize` option) used to parse sizes with two grammars; this is the union of both, so everything
either accepted is still accepted.  Units are binary whatever their spelling: `k`, `kb`, `kib` (and
`m`, `g`, `t` alike) are powers of 1024; `b` (or `ib`) is bytes.  The number may have a fraction or an
exponent (`1.5g`, `1e6`) and underscores (`134_217_728`); case and spaces around the unit do not
matter.  A pure module at the bottom of the package: every layer may use it.
"""

from __future__ import annotations

import re

_SIZE = re.compile(r"\s*(\+?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*(?:([kmgt]?)i?b|([kmgt]))?\s*", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
EXAMPLES = "134217728, 128m, 128MiB, 1g"


class SizeError(ValueError):
    """Not a byte count, or not a positive one; the message quotes the text and never names an option."""


def parse_size(text: str | int) -> int:
    """Bytes of a positive size in the grammar above (an int passes through, if positive)."""
    if isinstance(text, int):
        value = text
    else:
        m = _SIZE.fullmatch(text.replace("_", ""))
        if not m:
            raise SizeError(f"{text!r} is not a size (examples: {EXAMPLES})")
        number, unit = m.group(1), (m.group(2) or m.group(3) or "").lower()
        if number.lstrip("+").isdigit():
            value = int(number) * _UNITS[unit]  # exact, however large
        else:
            try:
                value = int(float(number) * _UNITS[unit])
            except OverflowError:  # 1e400: beyond a float
                raise SizeError(f"{text!r} is too large a size") from None
    if value <= 0:
        raise SizeError(f"size must be positive, got {text!r}")
    return value
