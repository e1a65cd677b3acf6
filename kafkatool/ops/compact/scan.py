"""The cleaner's walks over batch headers: `BatchScan`, with runs of plain v2 headers read by the compiled core.

Why: the cleaner walks every batch header of the dirty segments three times (loading the log, the
offset-map pass, the cleaning pass's chunks), and with small batches reading headers one
`read_batch_header` call at a time was about a quarter of a run.  The compiled `batch_run` reads a run
of complete v2 headers into the same `Batch` objects in one call; whatever it stops at (a partial
tail, a damaged frame, v0/v1 messages, offsets past 64 bits) is read by `read_batch_header` as
`BatchScan` reads it, so the batches, `valid_bytes` and `error` are `BatchScan`'s
(`tests/test_core_diff.py` compares them).  Without the core this is `BatchScan`.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafkatool.log.core import speedups
from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.records import Batch, BatchScan, read_batch_header

RUN_BATCHES = 512  # batches read per compiled call...
RUN_BYTES = 4 * 1024 * 1024  # ...or fewer: mapped pages are released between runs (MappedFile.release)


class CleanerScan(BatchScan):
    """`BatchScan` reading runs of v2 headers with the compiled core (see the module docstring)."""

    def __iter__(self) -> Iterator[Batch]:
        if speedups is None:
            yield from super().__iter__()
            return
        run_of = speedups.batch_run
        pos, end, buf, release = self.start, self.end, self.buf, self.release
        view = memoryview(buf)
        while True:
            run, stop = run_of(Batch, buf, view, pos, end, RUN_BATCHES, RUN_BYTES)
            if run:
                if release is not None:
                    release(pos)
                for b in run:
                    self.valid_bytes = b.position + b.size
                    yield b
                pos = stop
            try:  # where the run stopped: a batch it does not read (or the next run's first), or the end
                b = read_batch_header(buf, pos, end)
            except CorruptRecordError as exc:
                self.error = exc
                return
            if b is None:
                return
            b.view = view
            if release is not None:
                release(pos)
            pos += b.size
            self.valid_bytes = pos
            yield b
