/* The v2 batch walks of the recovery path: CRC checks and index entries over runs of plain batches.
 *
 *   verify_crcs(buf, start, end)  mirrors log/records.py's verify_crcs.
 *   walk_v2_run(...)              mirrors the fast path of log/segment.py's walk_segment with
 *                                 log/indexer.py's IndexBuilder.on_recover: what recover (ops/recover)
 *                                 and the index rebuild spend their time in.
 *
 * Both stop *before* anything unusual (a legacy message, a damaged or cut batch, an index entry the
 * broker would refuse) and leave it to the Python walk, which reports it with its own words.
 */
#include "core.h"

/* ---------------------------------------------------------------------------------------------
 * verify_crcs(buf, start, end) -> (batches, valid bytes, first bad position or None)
 * ------------------------------------------------------------------------------------------- */

static PyObject *py_verify_crcs(PyObject *self, PyObject *args)
{
    Py_buffer b;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "y*nn", &b, &start, &end))
        return NULL;
    if (end > b.len)
        end = b.len; /* the Python version slices, which clamps; its framing checks stop at len(buf) */
    const unsigned char *p = b.buf;
    Py_ssize_t pos = start, n = 0;
    int bad = 0;
    if (start < 0) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_ValueError, "start must not be negative");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS /* the buffer stays exported (an mmap cannot close) until released */
    while (pos + 17 < end && pos + 21 <= end) {
        int32_t size = be32(p + pos + 8);
        int64_t total = (int64_t)size + 12;
        if (size < 14 || pos + total > end)
            break;
        int ok;
        if (p[pos + 16] >= 2) { /* unsigned, as the Python frame struct reads it */
            ok = total >= 61 && crc32c(p + pos + 21, (size_t)(total - 21)) == (uint32_t)be32(p + pos + 17);
        } else {
            /* legacy messages: zlib's CRC32, which the Python side computes; a C walk stops here */
            bad = 2;
            break;
        }
        if (!ok) {
            bad = 1;
            break;
        }
        n++;
        pos += (Py_ssize_t)total;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    if (bad == 2) /* (batches so far, position, -1): the caller finishes the walk in Python */
        return Py_BuildValue("nnn", n, pos, (Py_ssize_t)-1);
    if (bad == 1)
        return Py_BuildValue("nnn", n, pos, pos);
    return Py_BuildValue("nnO", n, pos, Py_None);
}

/* ---------------------------------------------------------------------------------------------
 * walk_v2_run: the recovery walk's fast path
 * ------------------------------------------------------------------------------------------- */

typedef struct {
    int64_t *v;
    size_t n, cap;
} vec;

static int vec_push(vec *a, int64_t x)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 256;
        int64_t *v = PyMem_RawRealloc(a->v, cap * sizeof(int64_t));
        if (v == NULL)
            return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

static int get_i64(PyObject *obj, const char *name, int64_t *out)
{
    PyObject *v = PyObject_GetAttrString(obj, name);
    if (v == NULL)
        return -1;
    long long x = PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (x == -1 && PyErr_Occurred())
        return -1;
    *out = x;
    return 0;
}

static int set_i64(PyObject *obj, const char *name, int64_t x)
{
    PyObject *v = PyLong_FromLongLong(x);
    if (v == NULL)
        return -1;
    int r = PyObject_SetAttrString(obj, name, v);
    Py_DECREF(v);
    return r;
}



/* Appends the (a, b) pairs of v to a bytearray as index entries: the `.index` layout (int32 a - base,
 * int32 b) or, `time`, the `.timeindex` one (int64 a, int32 b - base). */
static int append_entries(PyObject *ba, const vec *v, int64_t base, int time)
{
    size_t k = v->n / 2, esize = time ? 12 : 8;
    Py_ssize_t old = PyByteArray_GET_SIZE(ba);
    if (!k)
        return 0;
    if (PyByteArray_Resize(ba, old + (Py_ssize_t)(k * esize)) < 0)
        return -1;
    unsigned char *o = (unsigned char *)PyByteArray_AS_STRING(ba) + old;
    for (size_t i = 0; i < k; i++, o += esize) {
        int64_t a = v->v[2 * i], b = v->v[2 * i + 1];
        if (time) {
            put_be(o, (uint64_t)a, 8);
            put_be(o + 8, (uint64_t)(b - base), 4);
        } else {
            put_be(o, (uint64_t)(a - base), 4);
            put_be(o + 4, (uint64_t)b, 4);
        }
    }
    return 0;
}

static int extend_array(PyObject *arr, const int64_t *v, size_t n)
{
    PyObject *bytes = PyBytes_FromStringAndSize((const char *)v, (Py_ssize_t)(n * sizeof(int64_t)));
    if (bytes == NULL)
        return -1;
    PyObject *r = PyObject_CallMethod(arr, "frombytes", "O", bytes);
    Py_DECREF(bytes);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* walk_v2_run(buf, pos, end, stop_at, base_offset, latest_epoch, builder, arrays)
 *     -> (batches, new pos, last offset of the last batch walked)
 *
 * Walks whole, CRC-valid v2 batches from pos while pos < stop_at, feeding `builder` (an
 * indexer.IndexBuilder) exactly as IndexBuilder.on_recover would: its entries are appended, encoded,
 * to its `offset_index` / `time_index` bytearrays and its last-entry fields updated.  It stops
 * *before* any batch the Python walk must look at: not v2, short or cut, a bad CRC, an offset outside
 * [base_offset, base_offset + INT32_MAX], a leader epoch above `latest_epoch` (-1: none yet), a
 * transactional or control batch with a producer id, or an index entry the broker would refuse.
 * `arrays` is None or the (positions, last offsets, max timestamps) array('q')s to extend.
 */
static PyObject *py_walk_v2_run(PyObject *self, PyObject *args)
{
    Py_buffer b;
    Py_ssize_t pos, end, stop_at;
    long long base_offset, latest_epoch;
    PyObject *builder, *arrays;
    if (!PyArg_ParseTuple(args, "y*nnnLLOO", &b, &pos, &end, &stop_at, &base_offset, &latest_epoch, &builder,
                          &arrays))
        return NULL;
    PyObject *result = NULL, *off_ba = NULL, *time_ba = NULL;
    vec offs = {0}, times = {0}, rec = {0};
    int64_t interval, max_ts, off_of_max, last_entry_pos, last_off_entry = 0, lt_ts = 0, lt_off = 0;
    int has_off, has_time;
    if (end > b.len)
        end = b.len;
    if (pos < 0 || (arrays != Py_None && (!PyTuple_Check(arrays) || PyTuple_GET_SIZE(arrays) != 3))) {
        PyErr_SetString(PyExc_ValueError, "walk_v2_run: bad position or arrays");
        goto done;
    }
    if (get_i64(builder, "index_interval", &interval) < 0 || get_i64(builder, "max_timestamp", &max_ts) < 0 ||
        get_i64(builder, "offset_of_max_timestamp", &off_of_max) < 0 ||
        get_i64(builder, "_last_entry_position", &last_entry_pos) < 0 ||
        get_i64(builder, "last_index_offset", &last_off_entry) < 0 ||
        get_i64(builder, "last_time_timestamp", &lt_ts) < 0 || get_i64(builder, "last_time_offset", &lt_off) < 0)
        goto done;
    off_ba = PyObject_GetAttrString(builder, "offset_index");
    time_ba = PyObject_GetAttrString(builder, "time_index");
    if (off_ba == NULL || time_ba == NULL)
        goto done;
    if (!PyByteArray_Check(off_ba) || !PyByteArray_Check(time_ba)) {
        PyErr_SetString(PyExc_TypeError, "walk_v2_run: the index contents must be bytearrays");
        goto done;
    }
    has_off = PyByteArray_GET_SIZE(off_ba) > 0;
    has_time = PyByteArray_GET_SIZE(time_ba) > 0;
    const unsigned char *p = b.buf;
    const i128 limit = (i128)base_offset + INT32_MAX;
    Py_ssize_t count = 0;
    int64_t last = 0;
    int nomem = 0;
    Py_BEGIN_ALLOW_THREADS
    while (pos < stop_at && pos + 61 <= end) {
        const unsigned char *h = p + pos;
        int64_t offset = be64(h);
        int32_t size = be32(h + 8);
        int32_t ple = be32(h + 12);
        if (h[16] != 2 || size < 49 || (int64_t)pos + 12 + size > (int64_t)end)
            break;
        int16_t attrs = be16(h + 21);
        int32_t delta = be32(h + 23);
        int64_t batch_max_ts = be64(h + 35);
        int64_t pid = be64(h + 43);
        i128 last_off = (i128)offset + delta;
        if (last_off > limit || last_off < base_offset)
            break;
        if (ple >= 0 && ple > latest_epoch)
            break;
        if (pid >= 0 && (attrs & (0x10 | 0x20)))
            break;
        if (crc32c(h + 21, (size_t)size + 12 - 21) != (uint32_t)be32(h + 17))
            break;
        /* IndexBuilder.on_recover, with the entry's checks done before anything changes */
        int64_t lo = (int64_t)last_off;
        int64_t nmax = max_ts, noff = off_of_max;
        if (batch_max_ts > nmax) {
            nmax = batch_max_ts;
            noff = lo;
        }
        if ((int64_t)pos - last_entry_pos > interval) {
            if (has_off && lo <= last_off_entry)
                break; /* IndexOffsetError: Python raises it */
            if (has_time && noff < lt_off)
                break;
            if (vec_push(&offs, lo) < 0 || vec_push(&offs, (int64_t)pos) < 0) {
                nomem = 1;
                break;
            }
            has_off = 1;
            last_off_entry = lo;
            if (has_time ? nmax > lt_ts : nmax > -1) {
                if (vec_push(&times, nmax) < 0 || vec_push(&times, noff) < 0) {
                    nomem = 1;
                    break;
                }
                has_time = 1;
                lt_ts = nmax;
                lt_off = noff;
            }
            last_entry_pos = pos;
        }
        max_ts = nmax;
        off_of_max = noff;
        if (arrays != Py_None &&
            (vec_push(&rec, (int64_t)pos) < 0 || vec_push(&rec, lo) < 0 || vec_push(&rec, batch_max_ts) < 0)) {
            nomem = 1;
            break;
        }
        last = lo;
        count++;
        pos += (Py_ssize_t)size + 12;
    }
    Py_END_ALLOW_THREADS
    if (nomem) {
        PyErr_NoMemory();
        goto done;
    }
    /* write the state back: entries, then the tracking fields */
    if (append_entries(off_ba, &offs, base_offset, 0) < 0 || append_entries(time_ba, &times, base_offset, 1) < 0)
        goto done;
    if ((offs.n && set_i64(builder, "last_index_offset", last_off_entry) < 0) ||
        (times.n && (set_i64(builder, "last_time_timestamp", lt_ts) < 0 ||
                     set_i64(builder, "last_time_offset", lt_off) < 0)))
        goto done;
    if (set_i64(builder, "max_timestamp", max_ts) < 0 ||
        set_i64(builder, "offset_of_max_timestamp", off_of_max) < 0 ||
        set_i64(builder, "_last_entry_position", last_entry_pos) < 0)
        goto done;
    if (offs.n && PyObject_SetAttrString(builder, "_strict", Py_True) < 0)
        goto done;
    if (arrays != Py_None && rec.n) {
        /* rec holds (pos, last, ts) triples; each array gets one column */
        size_t k = rec.n / 3;
        int64_t *col = PyMem_Malloc(k * sizeof(int64_t) + 1);
        if (col == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        for (int c = 0; c < 3; c++) {
            for (size_t i = 0; i < k; i++)
                col[i] = rec.v[i * 3 + c];
            if (extend_array(PyTuple_GET_ITEM(arrays, c), col, k) < 0) {
                PyMem_Free(col);
                goto done;
            }
        }
        PyMem_Free(col);
    }
    result = Py_BuildValue("nnL", count, pos, (long long)last);
done:
    PyMem_RawFree(offs.v);
    PyMem_RawFree(times.v);
    PyMem_RawFree(rec.v);
    Py_XDECREF(off_ba);
    Py_XDECREF(time_ba);
    PyBuffer_Release(&b);
    return result;
}

PyMethodDef v2_walk_methods[] = {
    {"verify_crcs", py_verify_crcs, METH_VARARGS,
     "verify_crcs(buf, start, end) -> (batches, valid bytes, bad position, None, or -1 at a legacy message)"},
    {"walk_v2_run", py_walk_v2_run, METH_VARARGS, "The recovery walk's fast path over plain v2 batches."},
    {NULL, NULL, 0, NULL},
};
