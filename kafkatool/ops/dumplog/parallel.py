"""Deep/print text of a big log on several cores, byte-identical to one process.

Not in Kafka's tool (one thread): `ParallelText._dump_text_parallel` walks the batch headers once to
cut the log into chunks of whole batches, worker processes render each chunk with the one-process
renderer (`_render_chunk`, `log_text.LogText`), and the chunks are written back in file order with
their non-consecutive offsets stitched across the cuts.  `use_workers` says when that pays; the
thresholds are looked up here (tests shrink them).
"""

from __future__ import annotations

import os
from pathlib import Path

from kafkatool.log.core import speedups
from kafkatool.log.errors import CorruptRecordError
from kafkatool.log.files import MappedFile
from kafkatool.log.records import BatchScan
from kafkatool.ops.dumplog.log_text import LogText
from kafkatool.ops.dumplog.options import DumpOptions

PARALLEL_MIN_BYTES = 32 * 1024 * 1024  # below this, starting workers costs more than it saves
PARALLEL_CHUNK_BYTES = 4 * 1024 * 1024
PARALLEL_CHUNK_BYTES_COMPRESSED = 512 * 1024


def _jobs(requested: int) -> int:
    """Worker processes for deep/print text: --jobs, or one per CPU (at most 8) when 0; never more
    than the CPUs this process may run on (more workers only cost memory and start-up)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(requested, cpus) if requested > 0 else min(8, cpus))


def use_workers(opts: DumpOptions, end: int) -> bool:
    """Whether a text dump of a log's first `end` bytes is rendered by worker processes."""
    return (
        opts.deep_iteration
        and not opts.print_data_log  # printed values would all travel through a pipe: slower
        # the compiled core's record lines outrun the pipe from workers: one process unless asked
        and (opts.jobs > 1 or speedups is None)
        and _jobs(opts.jobs) > 1
        and end >= PARALLEL_MIN_BYTES
    )


def _render_chunk(task: tuple[str, int, int, DumpOptions]) -> tuple:
    """Worker: the text of the batches in [start, end) of a log, as the one-process dumper writes it."""
    import io

    path, start, end, opts = task
    out = io.BytesIO()
    dumper = LogText(opts, out, io.BytesIO())
    error = None
    with MappedFile(path) as mf:
        scan = BatchScan(mf.buf, start, end, release=mf.release)
        first = last = -1
        try:
            first, last = dumper._dump_batches_text(scan, Path(path), path)
        except CorruptRecordError as exc:
            error = (str(exc), exc.position)
    nc = next(iter(dumper.deferred.non_consecutive.values()), [])
    return out.getvalue(), first, last, nc, dumper.result.batches, dumper.result.records, error


class ParallelText(LogText):
    """The text of a log's batches, rendered in chunks by worker processes."""

    def _dump_text_parallel(self, mf: MappedFile, end: int, path: Path, shown: str) -> BatchScan:
        """Deep/print text on several cores: chunks of whole batches are rendered by worker
        processes and written here in file order, so the output is byte-identical to one process."""
        import multiprocessing as mp
        from collections import deque

        scan = BatchScan(mf.buf, 0, end, release=mf.release)
        cuts = [0]
        chunk = PARALLEL_CHUNK_BYTES
        for batch in scan:  # header walk only: finds the chunk boundaries, the valid end and any error
            if batch.codec and chunk == PARALLEL_CHUNK_BYTES:
                chunk = PARALLEL_CHUNK_BYTES_COMPRESSED  # compressed input expands: keep results small
            if batch.end - cuts[-1] >= chunk:
                cuts.append(batch.end)
        if cuts[-1] != scan.valid_bytes:
            cuts.append(scan.valid_bytes)
        tasks = [(str(path), a, b, self.opts) for a, b in zip(cuts, cuts[1:], strict=False)]
        jobs = _jobs(self.opts.jobs)
        abs_path = str(path.absolute())
        stitched: list[tuple[int, int]] = []
        prev_last = -1
        with mp.get_context("fork").Pool(jobs) as pool:
            it = iter(tasks)
            inflight: deque = deque()
            for t in [next(it, None) for _ in range(jobs + 1)]:
                if t is not None:
                    inflight.append(pool.apply_async(_render_chunk, (t,)))
            while inflight:
                out, first, last, non_consecutive, nbatches, nrecords, error = inflight.popleft().get()
                t = next(it, None)
                if t is not None:
                    inflight.append(pool.apply_async(_render_chunk, (t,)))
                self._w(out)
                self._line_open = error is not None and out[-1:] not in (b"", b"\n")
                self.result.batches += nbatches
                self.result.records += nrecords
                if first != -1:
                    if prev_last != -1 and first != prev_last + 1:
                        stitched.append((prev_last, first))
                    if prev_last != -1 and non_consecutive[:1] == [(-1, first)]:
                        non_consecutive = non_consecutive[1:]  # the chunk's own start, not the file's
                    stitched.extend(non_consecutive)
                    prev_last = last
                if error is not None:
                    if stitched:
                        self.deferred.non_consecutive.setdefault(abs_path, []).extend(stitched)
                    raise CorruptRecordError(error[0], error[1])
        if stitched:
            self.deferred.non_consecutive.setdefault(abs_path, []).extend(stitched)
        return scan
