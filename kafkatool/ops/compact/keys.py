"""What compaction needs of records, decoded without building them: offsets, keys, null values.

The cleaner reads every record twice (offset map, then retention) but needs only these columns, and
it copies a batch it keeps whole as raw bytes; so these decoders skip values, headers and `Record`s,
and check what they skip exactly as `kafkatool.log.default_records.decode_v2_records` does (falling
back to it on any damage, so errors are its errors).  Only the cleaner uses them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import compress
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from kafkatool.log.codecs import Codec
from kafkatool.log.core import speedups
from kafkatool.log.default_records import ZIGZAG, decode_v2_records, read_headers
from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.record import NO_SEQUENCE, V2_HEADER_SIZE, Record
from kafkatool.log.records import Batch
from kafkatool.log.varint import read_varint

if TYPE_CHECKING:
    import numpy as np


class KeyColumns(NamedTuple):
    """What compaction needs of a batch's records, without building `Record`s: offsets, keys, and the
    indices of records whose value is null (tombstones), all in record order."""

    offsets: list[int]
    keys: list[bytes | None]
    null_values: list[int]


def key_columns(recs: list[Record]) -> KeyColumns:
    """KeyColumns of decoded records (legacy batches, and the fallback of `decode_v2_keys`)."""
    return KeyColumns(
        [r.offset for r in recs], [r.key for r in recs], [i for i, r in enumerate(recs) if r.value is None]
    )


def decode_v2_keys(d: bytes, count: int, base_offset: int) -> KeyColumns:
    """Offsets, keys and tombstone positions of `count` v2 records in d, skipping values and headers.

    Why: the log cleaner reads every record twice (offset map, then retention) but needs only these
    columns, and a batch it keeps whole is copied as raw bytes, so building values and `Record`s would be
    most of its work.  Records are checked as `decode_v2_records` checks them (lengths, headers, each
    record ending where its length says); on any damage the records are decoded again by
    `decode_v2_records`, so errors and their messages are exactly that function's.
    """
    offsets: list[int] = []
    keys: list[bytes | None] = []
    null_values: list[int] = []
    add_offset = offsets.append
    add_key = keys.append
    zz = ZIGZAG
    pos = 0
    last_hraw = None
    try:
        for i in range(count):
            b = d[pos]
            if b < 0x80:
                end = pos + 1 + zz[b]
                pos += 1
            else:
                b2 = d[pos + 1]
                if b2 < 0x80:
                    end = pos + 2 + zz[(b & 0x7F) | (b2 << 7)]
                    pos += 2
                else:
                    length, pos = read_varint(d, pos)
                    end = pos + length
            # attributes byte, then the timestamp delta (skipped)
            if d[pos + 1] < 0x80:
                pos += 2
            elif d[pos + 2] < 0x80:
                pos += 3
            else:
                _ts, pos = read_varint(d, pos + 1)
            b = d[pos]
            if b < 0x80:
                add_offset(base_offset + zz[b])
                pos += 1
            else:
                b2 = d[pos + 1]
                if b2 < 0x80:
                    add_offset(base_offset + zz[(b & 0x7F) | (b2 << 7)])
                    pos += 2
                else:
                    off_delta, pos = read_varint(d, pos)
                    add_offset(base_offset + off_delta)
            b = d[pos]
            if b < 0x80:
                klen = zz[b]
                pos += 1
            else:
                klen, pos = read_varint(d, pos)
            if klen >= 0:
                add_key(d[pos : pos + klen])
                pos += klen
            elif klen == -1:
                add_key(None)
            else:
                raise CorruptRecordError(f"invalid key length {klen}")
            b = d[pos]
            if b < 0x80:
                vlen = zz[b]
                pos += 1
            else:
                b2 = d[pos + 1]
                if b2 < 0x80:
                    vlen = zz[(b & 0x7F) | (b2 << 7)]
                    pos += 2
                else:
                    vlen, pos = read_varint(d, pos)
            if vlen >= 0:
                pos += vlen
            elif vlen == -1:
                null_values.append(i)
            else:
                raise CorruptRecordError(f"invalid value length {vlen}")
            if d[pos] == 0:
                pos += 1
            elif d[pos:end] == last_hraw:
                pos = end
            else:
                last_hraw = d[pos:end]
                _headers, pos = read_headers(d, pos)
            if pos != end:
                raise CorruptRecordError("record length mismatch")
    except (IndexError, CorruptRecordError):
        # decode_v2_records raises the error with its message (and partial records); should it accept
        # the records after all, its records are the answer
        return key_columns(decode_v2_records(d, count, base_offset, 0, None, NO_SEQUENCE))
    return KeyColumns(offsets, keys, null_values)


def batch_key_columns(b: Batch, data: bytes | None = None) -> KeyColumns:
    """KeyColumns of any batch: v2 through `decode_v2_keys`, v0/v1 by decoding its messages.

    Raises what `b.records()` raises on the same batch.  `data`: the batch's records data if already
    decompressed.
    """
    if b.magic < 2:
        return key_columns(b.records())
    count = b.count or 0
    if count <= 0 or b.size < V2_HEADER_SIZE:
        return key_columns(b.records())  # empty, or the header checks' errors
    return decode_v2_keys(b.records_data() if data is None else data, count, b.base_offset)


class BatchKeyColumns:
    """KeyColumns of several batches, concatenated in batch order (see `decode_key_columns`).

    Keys are cut out of the batches (or straight away digested) only when `keys()` asks for them, and
    only those it asks for: a caller that can judge most records by offset never touches their keys.
    `keys()` reads the batches' buffer, so it must be called while that is open.
    """

    __slots__ = ("offsets", "null_keys", "null_values", "starts", "_key_start", "_key_end", "_runs")

    def __init__(
        self,
        offsets: np.ndarray,
        null_keys: np.ndarray,
        null_values: np.ndarray,
        starts: list[int],
        key_start: np.ndarray,
        key_end: np.ndarray,
        runs: list[tuple[int, int, bytes]],
    ) -> None:
        self.offsets = offsets  # int64: each record's offset
        self.null_keys = null_keys  # bool: the record has no key
        self.null_values = null_values  # bool: the record's value is null (a tombstone)
        self.starts = starts  # batch i's records are [starts[i], starts[i + 1]); len(batches) + 1 entries
        self._key_start = key_start  # where each key is in the buffer of its run
        self._key_end = key_end
        self._runs = runs  # (first record, end record, buffer holding their keys), in order

    def __len__(self) -> int:
        return len(self.offsets)

    def keys(
        self, which: np.ndarray | None = None, key_digest: Callable[[bytes], Any] | None = None
    ) -> list[bytes | None]:
        """The keys of the records `which` (a bool mask) selects, all by default, in record order; None
        for a null key.  With `key_digest`, a hashlib-style constructor, each key's digest instead
        (`key_digest(key).digest()`), made while the key is at hand."""
        import numpy as np

        picked = np.arange(len(self.offsets)) if which is None else np.flatnonzero(which)
        out: list[bytes | None] = []
        for first, end, buf in self._runs:
            lo, hi = np.searchsorted(picked, (first, end))
            if lo == hi:
                continue
            sel = picked[lo:hi]
            ks = self._key_start[sel].tolist()
            ke = self._key_end[sel].tolist()
            if key_digest is None:
                out += [buf[k0:k1] for k0, k1 in zip(ks, ke, strict=True)]
            else:
                out += [key_digest(buf[k0:k1]).digest() for k0, k1 in zip(ks, ke, strict=True)]
        nulls = self.null_keys[picked]
        if bool(nulls.any()):
            for j in np.flatnonzero(nulls).tolist():
                out[j] = None
        return out

    def key_digests(self, which: np.ndarray, key_digest: Callable[[bytes], Any]) -> np.ndarray:
        """The digests of the keys `which` selects (none of them null) as an (n, size) uint8 array:
        what `keys(which, key_digest)` joins to.  MD5 (the offset map's) is hashed by the compiled core
        in one call per buffer when it is built; any other hash, or a null key, takes `keys`."""
        import numpy as np

        size = len(key_digest(b"").digest())
        if speedups is None or key_digest(b"").name != "md5" or bool(self.null_keys[which].any()):
            digests = cast("list[bytes]", self.keys(which, key_digest))  # callers select no null key
            return np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(-1, size)
        picked = np.flatnonzero(which)
        parts: list[bytes] = []
        for first, end, buf in self._runs:
            lo, hi = np.searchsorted(picked, (first, end))
            if lo == hi:
                continue
            sel = picked[lo:hi]
            starts = self._key_start[sel].astype(np.int64).tobytes()
            ends = self._key_end[sel].astype(np.int64).tobytes()
            got = speedups.md5_slices(buf, starts, ends)
            parts.append(got if got is not None else b"".join(key_digest(k).digest() for k in self._slices(buf, sel)))
        return np.frombuffer(b"".join(parts), dtype=np.uint8).reshape(-1, size)

    def _slices(self, buf: Any, sel: np.ndarray) -> list[Any]:
        return [buf[k0:k1] for k0, k1 in zip(self._key_start[sel].tolist(), self._key_end[sel].tolist(), strict=True)]


MIN_V2_RECORD_SIZE = 7  # length, attributes, timestamp and offset deltas, key and value lengths, headers


def _varints(a: np.ndarray, p: np.ndarray, top: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(value, size, too long) of the zig-zag varints at positions p (>= 0) of a, read up to 3 bytes;
    `too long` marks those of 4 bytes or more (their value and size are wrong).  Bytes past the end of
    a read as its last byte: a varint running off the end makes its record end past it (a damaged
    record).  uint8/int32 arithmetic: half the time of int64 here."""
    import numpy as np

    g0 = a.take(np.minimum(p, top))
    g1 = a.take(np.minimum(p + 1, top))
    g2 = a.take(np.minimum(p + 2, top))
    c0 = g0 >> 7
    c1 = c0 & (g1 >> 7)
    raw = (g0 & 0x7F).astype(np.int32)
    raw |= ((g1 & 0x7F) * c0).astype(np.int32) << 7
    raw |= ((g2 & 0x7F) * c1).astype(np.int32) << 14
    return (raw >> 1) ^ -(raw & 1), 1 + c0 + c1, (c1 & (g2 >> 7)).astype(bool)


MAX_FAST_HEADERS = 64  # records with more headers are decoded one by one (the compiled KF_MAX_HEADERS)
DECODE_BYTES_AT_ONCE = 8 * 1024 * 1024  # decompressed record data decode_key_columns holds at once


def decode_key_columns(batches: Sequence[Batch], *, max_bytes: int = DECODE_BYTES_AT_ONCE) -> BatchKeyColumns:
    """KeyColumns of many batches at once: what the log cleaner reads of every record, twice.

    Why: a per-record Python decoder costs microseconds a record; here only the walk from one record's
    length to the next is a loop (compiled when the core is built, else Python), and the fields of all records of all batches are then decoded
    together (compiled too, else with numpy), straight from the batches' buffer (the segment's mmap: nothing is copied unless
    batches are compressed), and keys are cut only when asked for (`BatchKeyColumns.keys`).  Batches
    this fast path does not cover (v0/v1, over MAX_FAST_HEADERS headers, varints longer than 3 bytes) and damaged ones are
    decoded one by one by `batch_key_columns`, in batch order, so the result and any error (the first
    damaged batch's, with its message) are what decoding every batch with `Batch.records()` in turn
    would give.  `max_bytes` bounds the decompressed data held at once (compressed batches are decoded
    in rounds).
    """
    rounds: list[BatchKeyColumns] = []
    done = 0
    while True:
        cols, used = _decode_key_columns_round(batches[done:], max_bytes)
        rounds.append(cols)
        done += used
        if done >= len(batches):
            break
    return rounds[0] if len(rounds) == 1 else _concat_key_columns(rounds)


def _concat_key_columns(parts: list[BatchKeyColumns]) -> BatchKeyColumns:
    import numpy as np

    starts = [0]
    runs: list[tuple[int, int, bytes]] = []
    for part in parts:
        shift = starts[-1]
        for first, end, buf in part._runs:
            if runs and runs[-1][2] is buf and runs[-1][1] == first + shift:  # one run: keys() slices less
                runs[-1] = (runs[-1][0], end + shift, buf)
            else:
                runs.append((first + shift, end + shift, buf))
        starts += [shift + x for x in part.starts[1:]]
    return BatchKeyColumns(
        np.concatenate([p.offsets for p in parts]),
        np.concatenate([p.null_keys for p in parts]),
        np.concatenate([p.null_values for p in parts]),
        starts,
        np.concatenate([p._key_start for p in parts]),
        np.concatenate([p._key_end for p in parts]),
        runs,
    )


def _walk_record_starts(buf: bytes, spans: list[tuple[int, int, int, int]]) -> tuple[np.ndarray, list[tuple[int, int, int, int]]]:
    """Step 2 of `_decode_key_columns_round` in Python: the starts of the records of every span it could
    walk, and those spans (the compiled core's `walk_record_starts` is the same walk)."""
    import numpy as np

    steps: list[int] = []
    add = steps.append
    walked: list[tuple[int, int, int, int]] = []
    for span in spans:
        _i, at, end, count = span
        if count * MIN_V2_RECORD_SIZE > end - at:
            continue  # cannot hold its records: the one-by-one decoder reports the damage
        first = len(steps)
        try:
            for _ in range(count):
                add(at)
                c = buf[at]
                if c < 0x80:
                    at += 1 + (c >> 1)
                    continue
                c2 = buf[at + 1]
                if c2 < 0x80:
                    at += 2 + (((c & 0x7F) >> 1) | (c2 << 6))
                    continue
                c3 = buf[at + 2]
                if c3 >= 0x80:
                    raise IndexError  # a 4+ byte length: left to the one-by-one decoder
                at += 3 + (((c & 0x7F) >> 1) | ((c2 & 0x7F) << 6) | (c3 << 13))
        except IndexError:
            del steps[first:]
            continue
        walked.append(span)
    starts = np.array(steps, dtype=np.int64)
    return starts, walked


def _check_fields(buf: bytes, quads: np.ndarray, starts: np.ndarray) -> tuple[list[bool], tuple[np.ndarray, ...]]:
    """Step 3 of `_decode_key_columns_round` with numpy: each walked batch's (data start, data end, record
    count, base offset) in `quads`, its records' `starts` (from the walk; clamped in place).  Returns
    whether each batch's records all check out, and the columns (offsets, null keys, null values, key
    starts, key ends) of every record (a bad batch's are not used)."""
    import numpy as np

    a = np.frombuffer(buf, dtype=np.uint8)
    top = len(a) - 1
    m = len(starts)
    counts = quads[:, 2]
    s = starts
    s[(s < 0) | (s > top)] = top  # a damaged length walked out of the buffer (its batch is bad)
    lo = np.repeat(quads[:, 0], counts)
    hi = np.repeat(quads[:, 1], counts)
    length, size, long1 = _varints(a, s, top)
    rec_end = s + size + length
    p = s + size + 1  # past the attributes byte
    _ts, size, long2 = _varints(a, p, top)
    p += size
    off_delta, size, long3 = _varints(a, p, top)
    p += size
    klen, size, long4 = _varints(a, p, top)
    key_start = p + size
    key_end = key_start + np.maximum(klen, 0)
    vlen, size, long5 = _varints(a, key_end, top)
    p = key_end + size + np.maximum(vlen, 0)
    hcount, size, long6 = _varints(a, p, top)
    p += size
    bad = long1 | long2 | long3 | long4 | long5 | long6 | (s < lo) | (rec_end > hi)
    bad |= (klen < -1) | (vlen < -1) | (hcount < 0) | (hcount > MAX_FAST_HEADERS)
    _skip_headers(a, p, hcount, bad, top)
    bad |= p != rec_end
    bounds = np.concatenate(([0], np.cumsum(counts)))
    chained = np.ones(m, dtype=bool)
    chained[:-1] = rec_end[:-1] == s[1:]  # each record ends where the next one starts...
    chained[bounds[1:] - 1] = True  # ...within its batch
    bad |= ~chained
    batch_ok = (~(np.add.reduceat(bad, bounds[:-1]) > 0)).tolist()
    rec_offsets = np.repeat(quads[:, 3], counts) + off_delta
    return batch_ok, (rec_offsets, klen == -1, vlen == -1, key_start, key_end)


def _skip_headers(a: np.ndarray, p: np.ndarray, hcount: np.ndarray, bad: np.ndarray, top: int) -> None:
    """Step 3's headers with numpy: moves each record's position `p` past its `hcount` headers (one round
    per header, over the records that have that many) and marks in `bad` a key length below 0, a value
    length below -1 or a varint of 4 bytes or more, as `key_fields` does (both in place)."""
    import numpy as np

    todo = np.flatnonzero(~bad & (hcount > 0))
    for h in range(int(hcount[todo].max()) if len(todo) else 0):
        todo = todo[(hcount[todo] > h) & ~bad[todo]]
        q = p[todo]
        hk, size, long_k = _varints(a, q, top)
        q += size + np.maximum(hk, 0)
        hv, size, long_v = _varints(a, q, top)
        q += size + np.maximum(hv, 0)
        p[todo] = q
        bad[todo] |= long_k | long_v | (hk < 0) | (hv < -1)


def _check_fields_compiled(
    buf: bytes, quads: np.ndarray, starts: np.ndarray, core: Any = None
) -> tuple[list[bool], tuple[np.ndarray, ...]]:
    """`_check_fields` by the compiled core (`key_fields`): the same batches pass, with the same columns.

    `core` is the compiled module to use (tests pass it explicitly, whatever KAFKATOOL_PURE_PYTHON says)."""
    import numpy as np

    core = core or speedups
    assert core is not None
    got = core.key_fields(buf, quads.tobytes(), starts.tobytes())
    cols = (
        np.frombuffer(got[0], dtype=np.int64),
        np.frombuffer(got[1], dtype=bool),
        np.frombuffer(got[2], dtype=bool),
        np.frombuffer(got[3], dtype=np.int64),
        np.frombuffer(got[4], dtype=np.int64),
    )
    return [bool(x) for x in got[5]], cols


def _decode_key_columns_round(batches: Sequence[Batch], max_bytes: int) -> tuple[BatchKeyColumns, int]:
    """decode_key_columns of the batches up to where max_bytes of them are decompressed; returns the
    columns and how many batches they cover."""
    import numpy as np

    n = len(batches)
    # 1. where each batch's records are: (batch index, data start, data end, count) in one address space
    spans: list[tuple[int, int, int, int]] = []
    decompressed: dict[int, bytes] = {}
    held = 0
    deferred: BaseException | None = None
    for i, b in enumerate(batches):
        if held and held >= max_bytes:  # the rest in another round (each round takes one batch at least)
            batches = batches[:i]
            n = i
            break
        count = b.count or 0
        if b.magic < 2 or count <= 0 or b.size < V2_HEADER_SIZE:
            continue  # decoded one by one below (legacy, empty, or the header checks' errors)
        if b.codec != Codec.NONE:
            try:
                decompressed[i] = data = b.records_data()
            except Exception as exc:  # the batches before it are decoded first: theirs would come first
                deferred = exc
                batches = batches[:i]
                n = i
                break
            held += len(data)
        spans.append((i, b.position + V2_HEADER_SIZE, b.position + b.size, count))
    buf: bytes = batches[spans[0][0]].buf if spans else b""
    if decompressed or any(batches[i].buf is not buf for i, _, _, _ in spans):
        parts: list[bytes] = []
        moved = []
        at = 0
        for i, start, end, count in spans:
            data = decompressed[i] if i in decompressed else batches[i].buf[start:end]
            parts.append(data)
            moved.append((i, at, at + len(data), count))
            at += len(data)
        buf = b"".join(parts)
        spans = moved
    # 2. the walk: each record's start from the previous record's length (compiled, else a Python step a record).
    # Only starts are proposed here (a negative length walks on as if positive); step 3 checks every
    # record and that each ends where the next one starts.
    got = None
    if speedups is not None and spans:  # the same walk, compiled
        got = speedups.walk_record_starts(buf, np.array([w[1:] for w in spans], dtype=np.int64).tobytes())
    if got is not None:
        starts = np.frombuffer(got[0], dtype=np.int64)
        walked = list(compress(spans, got[1]))
    else:
        starts, walked = _walk_record_starts(buf, spans)
    # 3. every field of every walked record (compiled, else vectorised); a record that does not check
    # out marks its batch
    m = len(starts)
    counts = np.array([w[3] for w in walked], dtype=np.int64)
    batch_ok: list[bool] = []
    fields = None
    if m:
        quads = np.array([(w[1], w[2], w[3], batches[w[0]].base_offset) for w in walked], dtype=np.int64)
        batch_ok, fields = (_check_fields_compiled if speedups is not None else _check_fields)(buf, quads, starts)
    # 4. in batch order: the walked and checked batches as they are, the others one by one
    fast = {w[0]: ok for w, ok in zip(walked, batch_ok, strict=True)}
    if deferred is None and len(fast) == n and all(batch_ok):
        if fields is None:  # no records at all
            empty = np.empty(0, dtype=np.int64)
            fields = (empty, empty.astype(bool), empty.astype(bool), empty, empty)
        offs, nk, nv, k0, k1 = fields
        return BatchKeyColumns(offs, nk, nv, [0, *np.cumsum(counts).tolist()], k0, k1, [(0, m, buf)]), n
    pieces: list[BatchKeyColumns] = []
    at = 0
    for i, b in enumerate(batches):
        if i in fast:
            c = b.count or 0
            if fast[i] and fields is not None:
                offs, nk, nv, k0, k1 = (f[at : at + c] for f in fields)
                pieces.append(BatchKeyColumns(offs, nk, nv, [0, c], k0, k1, [(0, c, buf)]))
                at += c
                continue
            at += c
        pieces.append(_one_batch_key_columns(batch_key_columns(b, decompressed.get(i))))
    if deferred is not None:
        raise deferred
    if not pieces:
        empty = np.empty(0, dtype=np.int64)
        return BatchKeyColumns(empty, empty.astype(bool), empty.astype(bool), [0], empty, empty, []), n
    return _concat_key_columns(pieces), n


def _one_batch_key_columns(cols: KeyColumns) -> BatchKeyColumns:
    """BatchKeyColumns of one batch decoded one by one: its keys laid end to end in a buffer of their own."""
    import numpy as np

    n = len(cols.offsets)
    null_keys = np.array([k is None for k in cols.keys], dtype=bool)
    sizes = np.array([0 if k is None else len(k) for k in cols.keys], dtype=np.int64)
    key_end = np.cumsum(sizes)
    null_values = np.zeros(n, dtype=bool)
    null_values[cols.null_values] = True
    return BatchKeyColumns(
        np.array(cols.offsets, dtype=np.int64),
        null_keys,
        null_values,
        [0, n],
        key_end - sizes,
        key_end,
        [(0, n, b"".join(k for k in cols.keys if k is not None))],
    )
