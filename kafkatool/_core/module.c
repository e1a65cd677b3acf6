/* kafkatool._speedups: the compiled core of the hot loops, one module built from these units.
 *
 * The pure-Python code stays the reference and the fallback; `kafkatool.log.core` picks this module
 * when it imports (and KAFKATOOL_PURE_PYTHON is unset).  Every function mirrors one Python function
 * byte for byte, and the differential tests (tests/test_core_diff.py, test_offsets_core_diff.py,
 * test_compact_fast_paths.py, test_record_keys.py) run both over the fixtures, generated logs and
 * fuzzed bytes.  One unit per Python unit accelerated:
 *
 *   crc32c.c             crc32c: CRC-32C (log/crc.py's function), used by every walk below
 *   v2_walk.c            verify_crcs (log/records.py), walk_v2_run (log/segment.walk_segment's run of
 *                        plain v2 batches with log/indexer.IndexBuilder.on_recover: the recovery walk)
 *   default_records.c    init, decode_v2_records (log/default_records.py)
 *   dumplog_lines.c      v2_record_lines, shallow_lines (ops/dumplog.py's record and batch lines)
 *   offsets_log.c        offsets_replay_run, offset_commit_key/value, offset_commits (ops/offsets_log.py)
 *   compact_scan.c       batch_run (ops/compact/scan.py)
 *   compact_keys.c       walk_record_starts, key_fields (ops/compact/keys.py)
 *   md5.c                md5_slices (ops/compact/keys.py's key digests)
 *   compact_offsetmap.c  offset_map_put (ops/compact/offsetmap.py)
 *   compact_cleaner.c    rebuild_v2 (ops/compact/cleaner.py)
 *   heap.c               heap_policy (kafkatool/heap.py)
 *
 * One extension rather than several: one import, one "is the compiled core built" answer for
 * `kafkatool --version` and the tests, and CRC-32C shared by the walks without a capsule.
 */
#include "core.h"

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kafkatool._speedups",
                                    "kafkatool's compiled core (see kafkatool.log.core).", -1, NULL};

PyMODINIT_FUNC PyInit__speedups(void)
{
    PyMethodDef *units[] = {crc32c_methods,       v2_walk_methods,      default_records_methods,
                            dumplog_lines_methods, offsets_log_methods,  md5_methods,
                            compact_scan_methods, compact_keys_methods, compact_offsetmap_methods,
                            compact_cleaner_methods, heap_methods};
    crc32c_init();
    dumplog_lines_init();
    md5_init();
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (PyModule_AddFunctions(m, units[i]) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    return m;
}
