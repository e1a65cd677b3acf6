/* The log cleaner's offset map: ops/compact/offsetmap.py's OffsetMap.put_until_full loop.
 *
 * Kafka's SkimpyOffsetMap: an open-addressed table of (MD5 digest, offset) slots probed as its
 * `positionOf` probes.  One put a key of the dirty section, each a cache miss in a table far larger
 * than the caches: the rows of the next keys are fetched ahead while this one is put.
 */
#include "core.h"

/* ---- the log cleaner's offset map (kafkatool.ops.compact.offsetmap.OffsetMap) ---- */

/* A digest's slot at an attempt, as OffsetMap._probe computes it: a big-endian 4-byte window of the
 * digest (linear steps past its end), Kafka's Utils.abs, modulo the table's slots. */
static inline int64_t omap_slot(const unsigned char *d, int64_t attempt, int64_t cap)
{
    int64_t v = (int64_t)be32(d + (attempt < 12 ? attempt : 12));
    if (attempt > 12)
        v += attempt - 12;
    v = v == INT32_MIN ? 0 : (v < 0 ? -v : v);
    return v % cap;
}

/* offset_map_put(table, digests, offsets, size, limit, track, track_first, track_last)
 *   -> (consumed, size, probes, track_last or None when tracking must stop)
 * OffsetMap.put_until_full's loop, one key at a time in log order: `table` is the writable slot table
 * (rows of three native uint64: the digest's two halves, offset + 1, 0 = empty), `digests` n*16 bytes,
 * `offsets` n native int64.  Before every put the map must hold fewer than `limit` entries, else it
 * stops there (the caller's limit is the map's max entries, or less when its table must grow first).
 * `track` (a writable uint8 array, or None) is OffsetMap's per-offset tracking: a put marks its offset
 * latest (2) and the offset it replaces put (1); offsets not strictly increasing past `track_last`, or
 * past the array, end tracking (None comes back, and nothing more is marked). */
#define OMAP_AHEAD 8 /* keys whose table rows are fetched ahead: the table is far larger than the caches */

static PyObject *py_offset_map_put(PyObject *self, PyObject *args)
{
    Py_buffer tab, dig, offs, trk = {0};
    PyObject *track_obj;
    long long size, limit, track_first, track_last;
    if (!PyArg_ParseTuple(args, "w*y*y*LLOLL", &tab, &dig, &offs, &size, &limit, &track_obj, &track_first,
                          &track_last))
        return NULL;
    PyObject *out = NULL;
    int tracking = track_obj != Py_None;
    if (tracking && PyObject_GetBuffer(track_obj, &trk, PyBUF_WRITABLE) < 0)
        goto done;
    Py_ssize_t n = offs.len / 8;
    int64_t cap = tab.len / 24;
    if (offs.len % 8 || dig.len != 16 * n || tab.len % 24 || cap <= 0 || limit > cap) {
        PyErr_SetString(PyExc_ValueError, "offset_map_put: inconsistent table, digests or offsets");
        goto done;
    }
    uint64_t *rows = tab.buf;
    const unsigned char *dg = dig.buf;
    const char *op = offs.buf;
    unsigned char *track = tracking ? trk.buf : NULL;
    int64_t track_len = tracking ? trk.len : 0;
    long long probes = 0;
    Py_ssize_t k = 0;
    int64_t first_slot[OMAP_AHEAD]; /* the first slots of the next keys, whose rows are being fetched */
    for (Py_ssize_t j = 0; j < OMAP_AHEAD && j < n; j++) {
        first_slot[j] = omap_slot(dg + 16 * j, 0, cap);
        __builtin_prefetch(rows + 3 * first_slot[j], 1);
    }
    for (; k < n && size < limit; k++) {
        const unsigned char *d = dg + 16 * k;
        uint64_t h[2];
        int64_t off;
        memcpy(h, d, 16);
        memcpy(&off, op + 8 * k, 8);
        uint64_t *row = rows + 3 * first_slot[k % OMAP_AHEAD];
        if (k + OMAP_AHEAD < n) {
            int64_t ahead = omap_slot(dg + 16 * (k + OMAP_AHEAD), 0, cap);
            first_slot[k % OMAP_AHEAD] = ahead;
            __builtin_prefetch(rows + 3 * ahead, 1);
        }
        for (int64_t attempt = 0;; attempt++) {
            probes++;
            if (attempt)
                row = rows + 3 * omap_slot(d, attempt, cap);
            if (row[2] == 0 || (row[0] == h[0] && row[1] == h[1]))
                break;
        }
        uint64_t old = row[2];
        if (old == 0) {
            row[0] = h[0];
            row[1] = h[1];
            size++;
        }
        row[2] = (uint64_t)off + 1;
        if (tracking) {
            if (off <= track_last || off - track_first >= track_len) {
                tracking = 0;
            } else {
                int64_t prev = (int64_t)(old - 1);
                if (old && prev >= track_first && prev - track_first < track_len)
                    track[prev - track_first] = 1;
                track[off - track_first] = 2;
                track_last = off;
            }
        }
    }
    out = Py_BuildValue("nLLO", k, size, probes, Py_None);
    if (out != NULL && tracking) {
        PyObject *last = PyLong_FromLongLong(track_last);
        if (last == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyTuple_SET_ITEM(out, 3, last);
        Py_DECREF(Py_None);
    }
done:
    if (trk.obj != NULL)
        PyBuffer_Release(&trk);
    PyBuffer_Release(&tab);
    PyBuffer_Release(&dig);
    PyBuffer_Release(&offs);
    return out;
}

PyMethodDef compact_offsetmap_methods[] = {
    {"offset_map_put", py_offset_map_put, METH_VARARGS, "OffsetMap.put_until_full's loop, one key at a time."},
    {NULL, NULL, 0, NULL},
};
