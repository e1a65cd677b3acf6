"""Java's text forms: `new String(bytes, UTF_8)` and `Double.toString`.

Valid UTF-8 decodes the same in Python and Java.  Invalid input does not: Java (JDK 17's
String.decodeUTF8) replaces some malformed sequences as a whole where Python's "replace" handler
emits one U+FFFD per byte (e.g. `ED A3` at the end of input, or encoded surrogates).  Kafka's tools
print keys, values and header keys through Java strings, so byte-exact output needs Java's rules.
"""

from __future__ import annotations

import math

REPL = "\ufffd"


def _not_cont(b: int) -> bool:
    return (b & 0xC0) != 0x80


def _malformed3(src: bytes, sp: int) -> int:
    b1 = src[sp]
    b2 = src[sp + 1]
    return 1 if (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or _not_cont(b2) else 2


def _malformed4(src: bytes, sp: int) -> int:
    b1 = src[sp]
    b2 = src[sp + 1]
    if b1 > 0xF4 or (b1 == 0xF0 and (b2 < 0x90 or b2 > 0xBF)) or (b1 == 0xF4 and (b2 & 0xF0) != 0x80) or _not_cont(b2):
        return 1
    if _not_cont(src[sp + 2]):
        return 2
    return 3


def _java_decode_slow(src: bytes) -> str:
    out: list[str] = []
    put = out.append
    sp = 0
    sl = len(src)
    while sp < sl:
        b1 = src[sp]
        sp += 1
        if b1 < 0x80:
            put(chr(b1))
        elif 0xC2 <= b1 <= 0xDF:
            if sp < sl:
                b2 = src[sp]
                sp += 1
                if _not_cont(b2):
                    put(REPL)
                    sp -= 1
                else:
                    put(chr(((b1 & 0x1F) << 6) | (b2 & 0x3F)))
                continue
            put(REPL)
            break
        elif 0xE0 <= b1 <= 0xEF:
            if sp + 1 < sl:
                b2 = src[sp]
                b3 = src[sp + 1]
                sp += 2
                if (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or _not_cont(b2) or _not_cont(b3):
                    put(REPL)
                    sp -= 3
                    sp += _malformed3(src, sp)
                else:
                    c = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
                    put(REPL if 0xD800 <= c <= 0xDFFF else chr(c))
                continue
            if sp < sl and ((b1 == 0xE0 and (src[sp] & 0xE0) == 0x80) or _not_cont(src[sp])):
                put(REPL)
                continue
            sp += 1
            put(REPL)
            break
        elif 0xF0 <= b1 <= 0xF7:
            if sp + 2 < sl:
                b2 = src[sp]
                b3 = src[sp + 1]
                b4 = src[sp + 2]
                sp += 3
                uc = ((b1 & 0x07) << 18) | ((b2 & 0x3F) << 12) | ((b3 & 0x3F) << 6) | (b4 & 0x3F)
                if _not_cont(b2) or _not_cont(b3) or _not_cont(b4) or not (0x10000 <= uc <= 0x10FFFF):
                    put(REPL)
                    sp -= 4
                    sp += _malformed4(src, sp)
                else:
                    put(chr(uc))
                continue
            if b1 > 0xF4 or (
                sp < sl
                and (
                    (b1 == 0xF0 and (src[sp] < 0x90 or src[sp] > 0xBF))
                    or (b1 == 0xF4 and (src[sp] & 0xF0) != 0x80)
                    or _not_cont(src[sp])
                )
            ):
                put(REPL)
                continue
            sp += 1
            put(REPL)
            if sp < sl and _not_cont(src[sp]):
                continue
            break
        else:
            put(REPL)
    return "".join(out)


def java_utf8(b: bytes) -> str:
    """`new String(b, StandardCharsets.UTF_8)`."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return _java_decode_slow(b)


def java_utf8_bytes(b: bytes) -> bytes:
    """What Java prints (as UTF-8) for `new String(b, UTF_8)`: b itself when it is valid UTF-8."""
    if b.isascii():
        return b
    try:
        b.decode("utf-8")
        return b
    except UnicodeDecodeError:
        return _java_decode_slow(b).encode("utf-8")


def java_double(value: float) -> str:
    """Java's `Double.toString` (as Jackson prints a DoubleNode); non-finite values quoted as Jackson does."""
    if math.isnan(value):
        return '"NaN"'
    if math.isinf(value):
        return '"Infinity"' if value > 0 else '"-Infinity"'
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    digits, exp = _shortest_digits(abs(value))
    # value = 0.<digits> * 10**exp
    if 1e-3 <= abs(value) < 1e7:
        if exp <= 0:
            return f"{sign}0.{'0' * -exp}{digits}"
        if exp >= len(digits):
            return f"{sign}{digits}{'0' * (exp - len(digits))}.0"
        return f"{sign}{digits[:exp]}.{digits[exp:]}"
    frac = digits[1:] or "0"
    return f"{sign}{digits[0]}.{frac}E{exp - 1}"


def _shortest_digits(value: float) -> tuple[str, int]:
    """Shortest round-trip digits of a positive finite double and the decimal point position."""
    from decimal import Decimal  # only doubles in decoded payloads need it: not at every start-up

    _, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)  # type: ignore[operator]
    return stripped, len(stripped) + exponent  # type: ignore[operator]
