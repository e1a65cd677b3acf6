/* kafkatool._speedups: the compiled core of the hot loops (issue 14).
 *
 * The pure-Python code stays the reference and the fallback; `kafkatool.log.core` picks this module
 * when it imports (and KAFKATOOL_PURE_PYTHON is unset).  Every function here mirrors one Python
 * function byte for byte, and the differential tests (tests/test_core_diff.py) run both over the
 * fixtures, generated logs and fuzzed bytes:
 *
 *   crc32c(data)           CRC-32C (Castagnoli): SSE4.2 (three streams) where the CPU has it, else a table.
 *   verify_crcs(...)       kafkatool.log.records.verify_crcs.
 *   walk_v2_run(...)       the fast path of kafkatool.log.segment.walk_segment: a run of plain v2
 *                          batches (CRC, offsets, index entries); it never raises for bad data: it stops
 *                          before anything unusual and leaves that batch to the Python walk.
 *   decode_v2_records(...) kafkatool.log.default_records.decode_v2_records, same Records, same errors.
 *   v2_record_lines(...)   kafkatool.ops.dumplog.LogDumper._v2_record_lines: the record lines of
 *                          dump-log --deep-iteration / --print-data-log, the same bytes.
 *   shallow_lines(...)     dump-log's batch lines without --deep-iteration (ops.dumplog.batch_line over a
 *                          BatchScan, CRC-checked as Batch.is_valid): a run of entries; it stops before a
 *                          damaged frame or an unknown codec and leaves it to the Python walk.
 *   offsets_replay_run(...), offset_commit_key(key), offset_commit_value(value), offset_commits(...)
 *                          the offline __consumer_offsets replay (kafkatool.ops.offsets_log): a run of
 *                          plain offset-commit batches, and the common key/value versions; anything
 *                          else is left to the Python decoders (None, or the run stops before it).
 *   md5_slices(...)        the MD5 digests of the cleaner's keys (hashlib's, byte for byte), one call a run.
 *   walk_record_starts(...) the cleaner's walk over record lengths (kafkatool.ops.compact.keys).
 *
 * Rules kept throughout: every read of the input is checked against its end; positions are kept in
 * 128-bit integers where Python's unbounded ints could grow past 64 bits; every error path releases
 * what it holds.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdint.h>
#include <string.h>

typedef __int128 i128;

/* ---------------------------------------------------------------------------------------------
 * CRC-32C
 * ------------------------------------------------------------------------------------------- */

static uint32_t crc_table[8][256];
static int have_sse42 = 0;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xFF];
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    have_sse42 = __builtin_cpu_supports("sse4.2");
#endif
}

/* slicing-by-8: the portable path */
static uint32_t crc_sw(uint32_t crc, const unsigned char *p, size_t n)
{
    while (n && ((uintptr_t)p & 7)) {
        crc = crc_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
        n--;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= crc; /* little-endian machines only reach here with the table in this order */
        crc = crc_table[7][w & 0xFF] ^ crc_table[6][(w >> 8) & 0xFF] ^ crc_table[5][(w >> 16) & 0xFF] ^
              crc_table[4][(w >> 24) & 0xFF] ^ crc_table[3][(w >> 32) & 0xFF] ^
              crc_table[2][(w >> 40) & 0xFF] ^ crc_table[1][(w >> 48) & 0xFF] ^ crc_table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = crc_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

/* Shifting a CRC register past n zero bytes is linear over GF(2): a 32x32 bit matrix, kept as its
 * 32 columns (the image of each register bit), applied per byte through four 256-entry tables. */
static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
    uint32_t sum = 0;
    for (; vec; vec >>= 1, mat++)
        if (vec & 1)
            sum ^= *mat;
    return sum;
}

/* tables that move a CRC-32C register past `len` zero bytes (len a power of two) */
static void crc_zeros_tables(uint32_t tables[4][256], size_t len)
{
    uint32_t op[32], sq[32];
    op[0] = 0x82F63B78u; /* one zero bit: the reflected register shifts right, the polynomial folds in */
    for (int i = 1; i < 32; i++)
        op[i] = 1u << (i - 1);
    for (size_t bits = 1; bits < len * 8; bits <<= 1) { /* square: twice as many zero bits */
        for (int i = 0; i < 32; i++)
            sq[i] = gf2_times(op, op[i]);
        memcpy(op, sq, sizeof op);
    }
    for (uint32_t v = 0; v < 256; v++)
        for (int k = 0; k < 4; k++)
            tables[k][v] = gf2_times(op, v << (8 * k));
}

#define CRC_LONG 8192 /* bytes per stream of a long block, and of a short one */
#define CRC_SHORT 256
static uint32_t crc_long[4][256], crc_short[4][256];

static inline uint32_t crc_shift(uint32_t t[4][256], uint32_t c)
{
    return t[0][c & 0xFF] ^ t[1][(c >> 8) & 0xFF] ^ t[2][(c >> 16) & 0xFF] ^ t[3][c >> 24];
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* three independent streams over consecutive thirds of a block hide the instruction's 3-cycle latency;
 * their registers are merged by shifting past the zero bytes that follow each (crc_shift) */
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t n)
{
    uint64_t c = crc;
    while (n && ((uintptr_t)p & 7)) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        n--;
    }
    for (size_t blk = CRC_LONG; blk >= CRC_SHORT; blk = blk == CRC_LONG ? CRC_SHORT : 0) {
        uint32_t(*t)[256] = blk == CRC_LONG ? crc_long : crc_short;
        while (n >= 3 * blk) {
            uint64_t c1 = 0, c2 = 0, w0, w1, w2;
            const unsigned char *end = p + blk;
            do {
                memcpy(&w0, p, 8);
                memcpy(&w1, p + blk, 8);
                memcpy(&w2, p + 2 * blk, 8);
                c = __builtin_ia32_crc32di(c, w0);
                c1 = __builtin_ia32_crc32di(c1, w1);
                c2 = __builtin_ia32_crc32di(c2, w2);
                p += 8;
            } while (p < end);
            c = crc_shift(t, (uint32_t)c) ^ (uint32_t)c1;
            c = crc_shift(t, (uint32_t)c) ^ (uint32_t)c2;
            p += 2 * blk;
            n -= 3 * blk;
        }
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        n -= 8;
    }
    while (n--)
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    return (uint32_t)c;
}
#endif

/* CRC-32C of p[0:n], as the crc32c package computes it (initial value 0) */
static uint32_t crc32c(const unsigned char *p, size_t n)
{
    uint32_t crc = 0xFFFFFFFFu;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (have_sse42)
        return crc_hw(crc, p, n) ^ 0xFFFFFFFFu;
#endif
#if PY_LITTLE_ENDIAN
    return crc_sw(crc, p, n) ^ 0xFFFFFFFFu;
#else
    while (n--)
        crc = crc_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
#endif
}

static inline int64_t be64(const unsigned char *p)
{
    return (int64_t)(((uint64_t)p[0] << 56) | ((uint64_t)p[1] << 48) | ((uint64_t)p[2] << 40) |
                     ((uint64_t)p[3] << 32) | ((uint64_t)p[4] << 24) | ((uint64_t)p[5] << 16) |
                     ((uint64_t)p[6] << 8) | (uint64_t)p[7]);
}

static inline int32_t be32(const unsigned char *p)
{
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3]);
}

static inline int16_t be16(const unsigned char *p) { return (int16_t)(((uint16_t)p[0] << 8) | p[1]); }

/* A Python int for any 128-bit value (sums of two 64-bit ints never overflow it). */
static PyObject *long_from_i128(i128 v)
{
    if (v >= INT64_MIN && v <= INT64_MAX)
        return PyLong_FromLongLong((long long)v);
    unsigned char le[16];
    unsigned __int128 u = (unsigned __int128)v;
    for (int i = 0; i < 16; i++) {
        le[i] = (unsigned char)(u & 0xFF);
        u >>= 8;
    }
    return _PyLong_FromByteArray(le, 16, 1, 1);
}

static PyObject *py_crc32c(PyObject *self, PyObject *arg)
{
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0)
        return NULL;
    uint32_t c;
    Py_BEGIN_ALLOW_THREADS
    c = crc32c(b.buf, (size_t)b.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    return PyLong_FromUnsignedLong(c);
}

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

static inline void rb_put_be(unsigned char *o, uint64_t v, int n); /* big-endian store, defined below */

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
            rb_put_be(o, (uint64_t)a, 8);
            rb_put_be(o + 8, (uint64_t)(b - base), 4);
        } else {
            rb_put_be(o, (uint64_t)(a - base), 4);
            rb_put_be(o + 4, (uint64_t)b, 4);
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

/* ---------------------------------------------------------------------------------------------
 * decode_v2_records: the records of a v2 batch
 * ------------------------------------------------------------------------------------------- */

static PyObject *RecordType = NULL;        /* kafkatool.log.record.Record */
static PyObject *CorruptRecordError = NULL; /* kafkatool.log.errors.CorruptRecordError */
static PyObject *java_utf8 = NULL;          /* kafkatool.jvm.text.java_utf8 */

/* init(Record, CorruptRecordError, java_utf8): the Python objects the decoder builds and raises */
static PyObject *py_init(PyObject *self, PyObject *args)
{
    PyObject *r, *e, *j;
    if (!PyArg_ParseTuple(args, "O!OO", &PyType_Type, &r, &e, &j))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)r, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "Record must be a tuple type");
        return NULL;
    }
    Py_XSETREF(RecordType, Py_NewRef(r));
    Py_XSETREF(CorruptRecordError, Py_NewRef(e));
    Py_XSETREF(java_utf8, Py_NewRef(j));
    Py_RETURN_NONE;
}

/* How a read failed, mapped to the Python function's exceptions. */
enum { ERR_NONE, ERR_INDEX, ERR_VARINT_END, ERR_VARINT_LONG, ERR_SET };

typedef struct {
    const unsigned char *d;
    i128 n;
    int err;
} reader;

/* kafkatool.log.varint.read_varint at pos: its own errors, not IndexError */
static int read_varint(reader *r, i128 *pos, int64_t *out)
{
    uint64_t raw = 0;
    int shift = 0;
    for (;;) {
        if (*pos < 0 || *pos >= r->n) {
            r->err = ERR_VARINT_END;
            return -1;
        }
        unsigned b = r->d[(Py_ssize_t)*pos];
        *pos += 1;
        raw |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
            return 0;
        }
        shift += 7;
        if (shift > 63) {
            r->err = ERR_VARINT_LONG;
            return -1;
        }
    }
}

/* d[i] as Python reads it: IndexError past the end */
static inline int byte_at(reader *r, i128 i, unsigned *out)
{
    if (i < 0 || i >= r->n) {
        r->err = ERR_INDEX;
        return -1;
    }
    *out = r->d[(Py_ssize_t)i];
    return 0;
}

/* a field decoded inline for one and two bytes, else by read_varint from `at` */
static inline int field2(reader *r, i128 *pos, int64_t *out)
{
    unsigned b, b2;
    if (byte_at(r, *pos, &b) < 0)
        return -1;
    if (b < 0x80) {
        *out = (int64_t)(b >> 1) ^ -(int64_t)(b & 1);
        *pos += 1;
        return 0;
    }
    if (byte_at(r, *pos + 1, &b2) < 0)
        return -1;
    if (b2 < 0x80) {
        unsigned raw = (b & 0x7F) | (b2 << 7);
        *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
        *pos += 2;
        return 0;
    }
    return read_varint(r, pos, out);
}

/* a field decoded inline for one byte only (read_headers) */
static inline int field1(reader *r, i128 *pos, int64_t *out)
{
    unsigned b;
    if (byte_at(r, *pos, &b) < 0)
        return -1;
    if (b < 0x80) {
        *out = (int64_t)(b >> 1) ^ -(int64_t)(b & 1);
        *pos += 1;
        return 0;
    }
    return read_varint(r, pos, out);
}

/* d[start:stop] as Python slices it (clamped to the buffer) */
static PyObject *slice(reader *r, i128 start, i128 stop)
{
    if (stop > r->n)
        stop = r->n;
    if (start > r->n)
        start = r->n;
    if (stop < start)
        stop = start;
    return PyBytes_FromStringAndSize((const char *)r->d + (Py_ssize_t)start, (Py_ssize_t)(stop - start));
}

static int set_error(reader *r, PyObject *msg)
{
    if (msg != NULL) {
        PyErr_SetObject(CorruptRecordError, msg);
        Py_DECREF(msg);
    }
    r->err = ERR_SET;
    return -1;
}

/* kafkatool.log.default_records.read_headers; returns a new tuple or NULL with r->err set */
static PyObject *read_headers(reader *r, i128 *pos)
{
    int64_t hcount;
    if (read_varint(r, pos, &hcount) < 0)
        return NULL;
    if (hcount < 0) {
        set_error(r, PyUnicode_FromFormat("invalid header count %lld", (long long)hcount));
        return NULL;
    }
    PyObject *hs = PyList_New(0);
    if (hs == NULL) {
        r->err = ERR_SET;
        return NULL;
    }
    for (int64_t h = 0; h < hcount; h++) {
        int64_t hklen, hvlen;
        if (field1(r, pos, &hklen) < 0)
            goto fail;
        if (hklen < 0) {
            set_error(r, PyUnicode_FromFormat("invalid header key length %lld", (long long)hklen));
            goto fail;
        }
        PyObject *raw = slice(r, *pos, *pos + hklen);
        if (raw == NULL)
            goto fail_set;
        PyObject *key = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw), NULL);
        if (key == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
            PyErr_Clear();
            key = PyObject_CallOneArg(java_utf8, raw); /* Java's replacement rules */
        }
        Py_DECREF(raw);
        if (key == NULL)
            goto fail_set;
        *pos += hklen;
        if (field1(r, pos, &hvlen) < 0) {
            Py_DECREF(key);
            goto fail;
        }
        PyObject *val;
        if (hvlen >= 0) {
            val = slice(r, *pos, *pos + hvlen);
            *pos += hvlen;
        } else if (hvlen == -1) {
            val = Py_NewRef(Py_None);
        } else {
            Py_DECREF(key);
            set_error(r, PyUnicode_FromFormat("invalid header value length %lld", (long long)hvlen));
            goto fail;
        }
        if (val == NULL) {
            Py_DECREF(key);
            goto fail_set;
        }
        PyObject *pair = PyTuple_Pack(2, key, val);
        Py_DECREF(key);
        Py_DECREF(val);
        if (pair == NULL || PyList_Append(hs, pair) < 0) {
            Py_XDECREF(pair);
            goto fail_set;
        }
        Py_DECREF(pair);
    }
    PyObject *t = PyList_AsTuple(hs);
    Py_DECREF(hs);
    if (t == NULL)
        r->err = ERR_SET;
    return t;
fail_set:
    r->err = ERR_SET;
fail:
    Py_DECREF(hs);
    return NULL;
}

/* A Record (tuple subclass) from 8 new references, stolen. */
static PyObject *make_record(PyObject *items[8])
{
    PyTypeObject *tp = (PyTypeObject *)RecordType;
    PyObject *rec = tp->tp_alloc(tp, 8);
    if (rec == NULL) {
        for (int i = 0; i < 8; i++)
            Py_DECREF(items[i]);
        return NULL;
    }
    for (int i = 0; i < 8; i++)
        PyTuple_SET_ITEM(rec, i, items[i]);
    return rec;
}

/* decode_v2_records(d, count, base_offset, base_timestamp, log_append_time, base_sequence) */
static PyObject *py_decode_v2_records(PyObject *self, PyObject *args)
{
    Py_buffer b;
    long long count, base_offset, base_ts, base_seq;
    PyObject *lat;
    if (RecordType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "kafkatool._speedups.init() was not called");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*LLLOL", &b, &count, &base_offset, &base_ts, &lat, &base_seq))
        return NULL;
    reader r = {b.buf, b.len, ERR_NONE};
    PyObject *out = PyList_New(0);
    PyObject *last_hraw = NULL, *last_headers = NULL, *log_append = NULL;
    const int seq_ok = base_seq != -1;
    i128 pos = 0;
    if (out == NULL)
        goto fail_set;
    if (lat != Py_None)
        log_append = Py_NewRef(lat); /* LogAppendTime: every record gets the batch's max timestamp */
    for (long long i = 0; i < count; i++) {
        int64_t length, ts_delta, off_delta, klen, vlen;
        unsigned b1, b2;
        if (field2(&r, &pos, &length) < 0)
            goto fail;
        i128 end = pos + length; /* checked once the record is read */
        /* the attributes byte is skipped unread; the timestamp delta starts after it */
        if (byte_at(&r, pos + 1, &b1) < 0)
            goto fail;
        if (b1 < 0x80) {
            ts_delta = (int64_t)(b1 >> 1) ^ -(int64_t)(b1 & 1);
            pos += 2;
        } else {
            if (byte_at(&r, pos + 2, &b2) < 0)
                goto fail;
            if (b2 < 0x80) {
                unsigned raw = (b1 & 0x7F) | (b2 << 7);
                ts_delta = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
                pos += 3;
            } else {
                pos += 1;
                if (read_varint(&r, &pos, &ts_delta) < 0)
                    goto fail;
            }
        }
        if (field2(&r, &pos, &off_delta) < 0 || field2(&r, &pos, &klen) < 0)
            goto fail;
        PyObject *key, *value, *headers;
        if (klen >= 0) {
            key = slice(&r, pos, pos + klen);
            if (key == NULL)
                goto fail_set;
            pos += klen;
        } else if (klen == -1) {
            key = Py_NewRef(Py_None);
        } else {
            set_error(&r, PyUnicode_FromFormat("invalid key length %lld", (long long)klen));
            goto fail;
        }
        if (field2(&r, &pos, &vlen) < 0) {
            Py_DECREF(key);
            goto fail;
        }
        if (vlen >= 0) {
            value = slice(&r, pos, pos + vlen);
            if (value == NULL) {
                Py_DECREF(key);
                goto fail_set;
            }
            pos += vlen;
        } else if (vlen == -1) {
            value = Py_NewRef(Py_None);
        } else {
            Py_DECREF(key);
            set_error(&r, PyUnicode_FromFormat("invalid value length %lld", (long long)vlen));
            goto fail;
        }
        if (byte_at(&r, pos, &b1) < 0) {
            Py_DECREF(key);
            Py_DECREF(value);
            goto fail;
        }
        /* headers: none, the previous record's (compared as d[pos:end] == last_hraw), or decoded */
        i128 hend = end > r.n ? r.n : end;
        if (b1 == 0) {
            headers = PyTuple_New(0);
            pos += 1;
        } else if (last_hraw != NULL && hend > pos && hend - pos == PyBytes_GET_SIZE(last_hraw) &&
                   memcmp(r.d + (Py_ssize_t)pos, PyBytes_AS_STRING(last_hraw), (size_t)(hend - pos)) == 0) {
            headers = Py_NewRef(last_headers);
            pos = end;
        } else {
            Py_XSETREF(last_hraw, slice(&r, pos, end));
            if (last_hraw == NULL) {
                headers = NULL;
            } else {
                headers = read_headers(&r, &pos);
                if (headers != NULL)
                    Py_XSETREF(last_headers, Py_NewRef(headers));
            }
        }
        if (headers == NULL) {
            Py_DECREF(key);
            Py_DECREF(value);
            if (r.err == ERR_NONE)
                r.err = ERR_SET;
            goto fail;
        }
        if (pos != end) {
            Py_DECREF(key);
            Py_DECREF(value);
            Py_DECREF(headers);
            if (length < 0 || end > r.n) {
                set_error(&r, PyUnicode_FromFormat("record length %lld runs past the end of the batch",
                                                   (long long)length));
            } else {
                PyObject *read = long_from_i128(pos - end + length);
                if (read != NULL) {
                    set_error(&r, PyUnicode_FromFormat("Invalid record size: expected to read %lld bytes in "
                                                       "record payload, but instead read %S",
                                                       (long long)length, read));
                    Py_DECREF(read);
                } else {
                    r.err = ERR_SET;
                }
            }
            goto fail;
        }
        PyObject *items[8];
        items[0] = long_from_i128((i128)base_offset + off_delta);
        items[1] = log_append != NULL ? Py_NewRef(log_append) : long_from_i128((i128)base_ts + ts_delta);
        items[2] = key;
        items[3] = value;
        items[4] = headers;
        if (seq_ok) {
            i128 s = (i128)base_seq <= (i128)INT32_MAX - off_delta
                         ? (i128)base_seq + off_delta
                         : (i128)off_delta - ((i128)INT32_MAX - base_seq) - 1;
            items[5] = long_from_i128(s);
        } else {
            items[5] = PyLong_FromLong(-1);
        }
        items[6] = Py_NewRef(Py_None);
        items[7] = Py_NewRef(Py_True);
        if (items[0] == NULL || items[1] == NULL || items[5] == NULL) {
            for (int k = 0; k < 8; k++)
                Py_XDECREF(items[k]);
            goto fail_set;
        }
        PyObject *rec = make_record(items);
        if (rec == NULL)
            goto fail_set;
        int rc = PyList_Append(out, rec);
        Py_DECREF(rec);
        if (rc < 0)
            goto fail_set;
    }
    Py_XDECREF(last_hraw);
    Py_XDECREF(last_headers);
    Py_XDECREF(log_append);
    PyBuffer_Release(&b);
    return out;

fail_set:
    r.err = ERR_SET;
fail:
    /* the Python function's exceptions: IndexError becomes "runs past the end", varint errors
     * keep their own message; every CorruptRecordError carries the records decoded before it */
    if (r.err == ERR_INDEX)
        PyErr_SetString(CorruptRecordError, "record runs past the end of the batch");
    else if (r.err == ERR_VARINT_END)
        PyErr_SetString(CorruptRecordError, "varint runs past the end of the buffer");
    else if (r.err == ERR_VARINT_LONG)
        PyErr_SetString(CorruptRecordError, "varint is longer than 10 bytes");
    if (out != NULL && PyErr_ExceptionMatches(CorruptRecordError)) {
        PyObject *type, *val, *tb;
        PyErr_Fetch(&type, &val, &tb);
        PyErr_NormalizeException(&type, &val, &tb);
        if (val != NULL && PyObject_SetAttrString(val, "partial", out) < 0) {
            Py_XDECREF(type);
            Py_XDECREF(val);
            Py_XDECREF(tb);
        } else {
            PyErr_Restore(type, val, tb);
        }
    }
    Py_XDECREF(out);
    Py_XDECREF(last_hraw);
    Py_XDECREF(last_headers);
    Py_XDECREF(log_append);
    PyBuffer_Release(&b);
    return NULL;
}


/* ---------------------------------------------------------------------------------------------
 * v2_record_lines: dump-log's `| offset: ...` lines of v2 data records
 * ------------------------------------------------------------------------------------------- */

/* output built straight into a bytes object (no copy at the end); `o` is NULL once an error is set */
typedef struct {
    PyObject *o;
    char *p;
    size_t n, cap;
} sbuf;

static int sb_init(sbuf *b, size_t cap)
{
    b->o = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)cap);
    b->p = b->o ? PyBytes_AS_STRING(b->o) : NULL;
    b->n = 0;
    b->cap = cap;
    return b->o ? 0 : -1;
}

/* room for n more bytes */
static int sb_reserve(sbuf *b, size_t n)
{
    if (b->n + n <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + n)
        cap *= 2;
    if (_PyBytes_Resize(&b->o, (Py_ssize_t)cap) < 0)
        return -1; /* b->o is NULL and freed */
    b->p = PyBytes_AS_STRING(b->o);
    b->cap = cap;
    return 0;
}

/* the finished bytes (a new reference), or NULL after an error */
static PyObject *sb_finish(sbuf *b)
{
    if (b->o != NULL && _PyBytes_Resize(&b->o, (Py_ssize_t)b->n) < 0)
        return NULL;
    PyObject *o = b->o;
    b->o = NULL;
    return o;
}

static int sb_put(sbuf *b, const char *s, size_t n)
{
    if (sb_reserve(b, n) < 0)
        return -1;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

#define sb_lit(b, s) sb_put((b), (s), sizeof(s) - 1)

/* decimal digits of v, as %lld prints them (snprintf is most of the cost otherwise) */
static int sb_ll(sbuf *b, long long v)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *q = e;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        *--q = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--q = '-';
    return sb_put(b, q, (size_t)(e - q));
}

/* %d of any Python int (offsets past 64 bits print in full, as bytes %-formatting does) */
static int sb_int(sbuf *b, PyObject *v)
{
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (!overflow)
        return sb_ll(b, x);
    PyObject *s = PyObject_Str(v);
    if (s == NULL)
        return -1;
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    int r = u == NULL ? -1 : sb_put(b, u, (size_t)n);
    Py_DECREF(s);
    return r;
}

static int is_ascii(const char *p, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) { /* eight bytes at a time: values are most of print's input */
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w & 0x8080808080808080ULL)
            return 0;
    }
    for (; i < n; i++)
        if ((unsigned char)p[i] >= 0x80)
            return 0;
    return 1;
}

/* the bytes as dump-log prints them: themselves when ASCII, else java_utf8_bytes(b) */
static int sb_text(sbuf *b, PyObject *bytes, PyObject *jb)
{
    if (!PyBytes_Check(bytes)) {
        PyErr_SetString(PyExc_TypeError, "record keys and values must be bytes");
        return -1;
    }
    if (is_ascii(PyBytes_AS_STRING(bytes), PyBytes_GET_SIZE(bytes)))
        return sb_put(b, PyBytes_AS_STRING(bytes), (size_t)PyBytes_GET_SIZE(bytes));
    PyObject *t = PyObject_CallOneArg(jb, bytes);
    if (t == NULL)
        return -1;
    int r = PyBytes_Check(t) ? sb_put(b, PyBytes_AS_STRING(t), (size_t)PyBytes_GET_SIZE(t)) : -1;
    if (!PyBytes_Check(t))
        PyErr_SetString(PyExc_TypeError, "java_utf8_bytes must return bytes");
    Py_DECREF(t);
    return r;
}

/* b",".join(key.encode("utf-8") for key, _ in headers) */
static PyObject *header_keys(PyObject *h)
{
    sbuf b;
    PyObject *out = NULL;
    if (sb_init(&b, 64) < 0)
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(h); i++) {
        PyObject *pair = PyTuple_GET_ITEM(h, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) < 1 || !PyUnicode_Check(PyTuple_GET_ITEM(pair, 0))) {
            PyErr_SetString(PyExc_TypeError, "headers must be (str, bytes) pairs");
            goto done;
        }
        PyObject *enc = PyUnicode_AsUTF8String(PyTuple_GET_ITEM(pair, 0)); /* strict, as .encode() */
        if (enc == NULL)
            goto done;
        int r = (i ? sb_put(&b, ",", 1) : 0) < 0 ? -1
                                                : sb_put(&b, PyBytes_AS_STRING(enc), (size_t)PyBytes_GET_SIZE(enc));
        Py_DECREF(enc);
        if (r < 0)
            goto done;
    }
    out = sb_finish(&b);
done:
    Py_XDECREF(b.o);
    return out;
}

/* v2_record_lines(records, ts_name, printing, java_utf8_bytes) -> bytes
 * What dumplog.LogDumper._v2_record_lines appends for these records, joined. */
static PyObject *py_v2_record_lines(PyObject *self, PyObject *args)
{
    PyObject *recs, *jb;
    const char *ts_name;
    Py_ssize_t ts_len;
    int printing;
    if (!PyArg_ParseTuple(args, "O!y#pO", &PyList_Type, &recs, &ts_name, &ts_len, &printing, &jb))
        return NULL;
    sbuf b;
    PyObject *last_h = NULL, *hk = NULL, *out = NULL;
    /* Batches of one log print alike: start at the last batch's size per record (and a little more),
     * so the buffer is not grown and copied on every batch (9 GB of text from a 256 MiB log) */
    static size_t per_record = 128;
    size_t nrec = (size_t)PyList_GET_SIZE(recs);
    if (sb_init(&b, nrec * per_record + 256) < 0)
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(recs); i++) {
        PyObject *r = PyList_GET_ITEM(recs, i);
        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) < 6) {
            PyErr_SetString(PyExc_TypeError, "records must be Records");
            goto done;
        }
        PyObject *k = PyTuple_GET_ITEM(r, 2), *v = PyTuple_GET_ITEM(r, 3), *h = PyTuple_GET_ITEM(r, 4);
        if ((k != Py_None && !PyBytes_Check(k)) || (v != Py_None && !PyBytes_Check(v)) || !PyTuple_Check(h)) {
            PyErr_SetString(PyExc_TypeError, "records must be Records");
            goto done;
        }
        if (h != last_h) {
            PyObject *n = header_keys(h);
            if (n == NULL)
                goto done;
            Py_XSETREF(hk, n);
            last_h = h; /* borrowed: recs keeps it alive */
        }
        if (sb_lit(&b, "| offset: ") < 0 || sb_int(&b, PyTuple_GET_ITEM(r, 0)) < 0 || sb_lit(&b, " ") < 0 ||
            sb_put(&b, ts_name, (size_t)ts_len) < 0 || sb_lit(&b, ": ") < 0 ||
            sb_int(&b, PyTuple_GET_ITEM(r, 1)) < 0 || sb_lit(&b, " keySize: ") < 0 ||
            sb_ll(&b, k == Py_None ? -1 : (long long)PyBytes_GET_SIZE(k)) < 0 || sb_lit(&b, " valueSize: ") < 0 ||
            sb_ll(&b, v == Py_None ? -1 : (long long)PyBytes_GET_SIZE(v)) < 0 || sb_lit(&b, " sequence: ") < 0 ||
            sb_int(&b, PyTuple_GET_ITEM(r, 5)) < 0 || sb_lit(&b, " headerKeys: [") < 0 ||
            sb_put(&b, PyBytes_AS_STRING(hk), (size_t)PyBytes_GET_SIZE(hk)) < 0 || sb_lit(&b, "]") < 0)
            goto done;
        if (printing) {
            if (k != Py_None && (sb_lit(&b, " key: ") < 0 || sb_text(&b, k, jb) < 0))
                goto done;
            if (v != Py_None && (sb_lit(&b, " payload: ") < 0 || sb_text(&b, v, jb) < 0))
                goto done;
        }
        if (sb_lit(&b, "\n") < 0)
            goto done;
    }
    if (nrec)
        per_record = b.n / nrec + b.n / nrec / 8 + 1;
    out = sb_finish(&b);
done:
    Py_XDECREF(hk);
    Py_XDECREF(b.o);
    return out;
}

/* ---------------------------------------------------------------------------------------------
 * Offline __consumer_offsets replay (kafkatool.ops.offsets_log)
 *
 * Like walk_v2_run, these never raise for bad data: anything they do not read exactly as the Python
 * decoders would (other versions, non-ASCII text, null fields, tagged fields, short input) returns
 * None or stops the run, and the Python path decodes it with its own results and errors.
 * ------------------------------------------------------------------------------------------- */

/* an int16-length string of ASCII bytes at *pos (ASCII decodes alike in java_utf8), else NULL with no error */
static PyObject *ascii_string(const unsigned char *d, Py_ssize_t n, Py_ssize_t *pos, Py_ssize_t len)
{
    if (len < 0 || len > 0x7FFF || len > n - *pos || !is_ascii((const char *)d + *pos, len))
        return NULL;
    PyObject *s = PyUnicode_DecodeASCII((const char *)d + *pos, len, NULL);
    *pos += len;
    return s;
}

/* decode_offsets_key with ASCII names as the replay keeps it: versions 0 and 1 (offset commit) as
 * (group, topic, partition), version 2 (group metadata) as the group; else NULL */
static PyObject *commit_key(const unsigned char *d, Py_ssize_t n)
{
    Py_ssize_t pos = 4;
    if (n < 4)
        return NULL;
    int16_t version = be16(d);
    if (version < 0 || version > 2)
        return NULL;
    PyObject *group = ascii_string(d, n, &pos, be16(d + 2));
    if (group == NULL || version == 2)
        return group;
    PyObject *topic = NULL;
    if (pos + 2 <= n) {
        Py_ssize_t len = be16(d + pos);
        pos += 2;
        topic = ascii_string(d, n, &pos, len);
    }
    if (topic == NULL || pos + 4 > n) {
        Py_DECREF(group);
        Py_XDECREF(topic);
        return NULL;
    }
    PyObject *part = PyLong_FromLong(be32(d + pos));
    if (part == NULL) {
        Py_DECREF(group);
        Py_DECREF(topic);
        return NULL;
    }
    PyObject *t = PyTuple_Pack(3, group, topic, part);
    Py_DECREF(group);
    Py_DECREF(topic);
    Py_DECREF(part);
    return t;
}

/* offset_commit_key(key) -> (group, topic, partition), group, or None: the tests' entry point */
static PyObject *py_offset_commit_key(PyObject *self, PyObject *arg)
{
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *t = commit_key(b.buf, b.len);
    PyBuffer_Release(&b);
    if (t == NULL && !PyErr_Occurred())
        Py_RETURN_NONE;
    return t;
}

/* decode_offset_commit_value, versions 0-4:
 * (offset, metadata, commit timestamp, expire timestamp, leader epoch), or NULL (with no error: the
 * Python decoder reads it) */
static PyObject *commit_value(const unsigned char *d, Py_ssize_t n)
{
    Py_ssize_t pos = 2;
    long long offset, commit_ts, expire_ts = -1;
    long epoch = -1;
    PyObject *meta = NULL, *out = NULL;
    if (n < 2)
        goto done;
    int16_t version = be16(d);
    if (version < 0 || version > 4 || n - pos < 8)
        goto done;
    offset = be64(d + pos);
    pos += 8;
    if (version >= 3) {
        if (n - pos < 4)
            goto done;
        epoch = be32(d + pos);
        pos += 4;
    }
    Py_ssize_t len;
    if (version == 4) { /* compact string: unsigned varint of length + 1 (one or two bytes here) */
        if (n - pos < 1)
            goto done;
        unsigned v = d[pos++];
        if (v & 0x80) {
            if (n - pos < 1 || d[pos] & 0x80)
                goto done;
            v = (v & 0x7F) | ((unsigned)d[pos++] << 7);
        }
        if (v == 0)
            goto done; /* null: the Python reader says why */
        len = (Py_ssize_t)v - 1;
    } else {
        if (n - pos < 2)
            goto done;
        len = be16(d + pos);
        pos += 2;
    }
    meta = ascii_string(d, n, &pos, len);
    if (meta == NULL || n - pos < 8)
        goto done;
    commit_ts = be64(d + pos);
    pos += 8;
    if (version == 1) {
        if (n - pos < 8)
            goto done;
        expire_ts = be64(d + pos);
        pos += 8;
    }
    if (version == 4 && (n - pos < 1 || d[pos] != 0))
        goto done; /* tagged fields present (or missing): the Python reader */
    out = Py_BuildValue("(LOLLl)", offset, meta, commit_ts, expire_ts, epoch);
done:
    Py_XDECREF(meta);
    return out;
}

static PyObject *py_offset_commit_value(PyObject *self, PyObject *arg)
{
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *out = commit_value(b.buf, b.len);
    PyBuffer_Release(&b);
    if (out == NULL && !PyErr_Occurred())
        Py_RETURN_NONE;
    return out;
}

/* a varint of a v2 record that fits in 32 bits signed (else -1: the Python decoder reads it) */
static inline int rvarint(const unsigned char *d, Py_ssize_t n, Py_ssize_t *pos, int64_t *out)
{
    uint64_t raw = 0;
    for (int shift = 0; shift <= 28; shift += 7) {
        if (*pos >= n)
            return -1;
        unsigned b = d[(*pos)++];
        raw |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            if (raw > 0xFFFFFFFFu)
                return -1;
            *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
            return 0;
        }
    }
    return -1;
}

typedef struct {
    Py_ssize_t key, klen, value, vlen; /* positions in the buffer; klen/vlen -1 for null */
    int64_t offset;
    int32_t rk; /* the index of the run's entry for the key (entries move as the table grows) */
    int8_t kind;
} replay_rec;

/* The records of the plain v2 batch at d[0:n], or -1 where the Python decoder must read them. */
static Py_ssize_t parse_replay_records(const unsigned char *d, Py_ssize_t n, int64_t count, int64_t base,
                                       replay_rec *out)
{
    Py_ssize_t pos = 61;
    for (int64_t i = 0; i < count; i++) {
        int64_t length, v;
        if (rvarint(d, n, &pos, &length) < 0 || length < 0 || length > n - pos)
            return -1;
        Py_ssize_t end = pos + (Py_ssize_t)length;
        pos += 1; /* attributes */
        if (rvarint(d, end, &pos, &v) < 0) /* timestamp delta */
            return -1;
        if (rvarint(d, end, &pos, &v) < 0)
            return -1;
        out[i].offset = base + v;
        if (rvarint(d, end, &pos, &v) < 0 || v < -1 || v > end - pos)
            return -1;
        out[i].key = pos;
        out[i].klen = (Py_ssize_t)v;
        if (v > 0)
            pos += (Py_ssize_t)v;
        if (rvarint(d, end, &pos, &v) < 0 || v < -1 || v > end - pos)
            return -1;
        out[i].value = pos;
        out[i].vlen = (Py_ssize_t)v;
        if (v > 0)
            pos += (Py_ssize_t)v;
        if (pos != end - 1 || d[pos] != 0) /* headers: none */
            return -1;
        pos = end;
    }
    return pos == n ? 0 : -1;
}

/* The keys of one run, by their bytes: each distinct key's bytes are hashed here and looked up in the
 * Python key cache (`keys`) once a run, not once a record.  An offset commit key's entry also holds its
 * latest commit of the run (`loaded[k]` is set once per key when the run ends, so a key written a
 * thousand times costs no Python object until then), in first-write order.  Two byte strings can name
 * the same (group, topic, partition) (key versions 0 and 1): the second's entry points at the first's
 * (`owner`), found by value.  The replay is bound by memory accesses to this table, so a record touches
 * one slot of the index and one entry, which holds what the record needs: the key's kind (no look at
 * the Python object) and its first bytes (no look back into the buffer for short keys). */
#define RUN_INLINE 40
#define RUN_RELEASE_EVERY (32 * 1024 * 1024)
#define RUN_AHEAD 6
enum { KIND_OTHER = 0, KIND_SKIP, KIND_GROUP, KIND_COMMIT };

typedef struct {
    uint64_t h;
    int32_t klen;
    int8_t kind;
    int32_t owner;  /* the entry holding the latest commit of this key's (group, topic, partition), or -1 */
    int32_t vlen;   /* the latest commit (owner == self): value, offset, batch base offset, producer id */
    const unsigned char *value;
    int64_t offset, base, pid;
    PyObject *k;             /* borrowed: what `keys` maps these bytes to (it only grows during a run) */
    const unsigned char *kp; /* the key's bytes in the caller's buffer (past RUN_INLINE) */
    unsigned char head[RUN_INLINE];
} run_key;

typedef struct {
    run_key *keys;
    Py_ssize_t nkeys, kcap;
    int32_t *index; /* open addressing over keys, -1 empty; size a power of two >= 2 * kcap */
    Py_ssize_t mask;
    int32_t *order; /* owners in first-write order */
    Py_ssize_t n;
    int32_t *succ;  /* the entry that followed each entry's key last time (-1: none yet), and the last */
    int32_t last;   /* entry seen: keys come back in the same order round after round (each group
                     * commits the same partitions again), so the walk guesses the next entry and
                     * fetches the entries a few records ahead into the cache while it works */
    PyObject *by_value; /* k -> owner entry, for the commit keys of the run (created on first use) */
} run_table;

static inline uint64_t key_hash(const unsigned char *p, Py_ssize_t n)
{
    uint64_t h = 0x243F6A8885A308D3ull ^ (uint64_t)n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, p, (size_t)n);
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 32);
}

static inline int run_same(const run_key *rk, const unsigned char *kp, Py_ssize_t klen, uint64_t h)
{
    if (rk->h != h || rk->klen != klen)
        return 0;
    Py_ssize_t head = klen < RUN_INLINE ? klen : RUN_INLINE;
    return memcmp(rk->head, kp, (size_t)head) == 0
           && (klen <= RUN_INLINE || memcmp(rk->kp + RUN_INLINE, kp + RUN_INLINE, (size_t)(klen - RUN_INLINE)) == 0);
}

static inline Py_ssize_t run_slot(const run_table *t, const unsigned char *kp, Py_ssize_t klen, uint64_t h)
{
    Py_ssize_t i = (Py_ssize_t)h & t->mask;
    for (;;) {
        int32_t e = t->index[i];
        if (e < 0 || run_same(&t->keys[e], kp, klen, h))
            return i;
        i = (i + 1) & t->mask;
    }
}

static int run_grow(run_table *t)
{
    Py_ssize_t cap = t->kcap ? t->kcap * 2 : 1024;
    if (cap > INT32_MAX / 4) {
        PyErr_NoMemory();
        return -1;
    }
    run_key *keys = PyMem_Realloc(t->keys, sizeof(run_key) * (size_t)cap);
    if (keys == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    t->keys = keys;
    int32_t *order = PyMem_Realloc(t->order, sizeof(int32_t) * (size_t)cap);
    if (order == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    t->order = order;
    int32_t *succ = PyMem_Realloc(t->succ, sizeof(int32_t) * (size_t)cap);
    if (succ == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    t->succ = succ;
    int32_t *index = PyMem_Malloc(sizeof(int32_t) * (size_t)cap * 2);
    if (index == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyMem_Free(t->index);
    t->index = index;
    t->kcap = cap;
    t->mask = cap * 2 - 1;
    memset(index, 0xFF, sizeof(int32_t) * (size_t)cap * 2);
    for (Py_ssize_t e = 0; e < t->nkeys; e++) {
        Py_ssize_t i = (Py_ssize_t)t->keys[e].h & t->mask;
        while (index[i] >= 0)
            i = (i + 1) & t->mask;
        index[i] = (int32_t)e;
    }
    return 0;
}

/* e is the entry of the record just read: remember it as the successor of the one before, and fetch
 * the entries the next few records will likely need */
static inline int32_t run_seen(run_table *t, int32_t e)
{
    if (t->last >= 0)
        t->succ[t->last] = e;
    t->last = e;
    int32_t g = e;
    for (int ahead = 0; ahead < RUN_AHEAD; ahead++) {
        g = t->succ[g];
        if (g < 0)
            break;
        __builtin_prefetch(&t->keys[g]);
        __builtin_prefetch((const char *)&t->keys[g] + 64);
    }
    return e;
}

/* The index of the run's entry for the key bytes kp[0:klen]: found, or resolved through `keys`
 * (decoding and caching it there as _PartitionReplay._key would) and added.  -1 with an error set on
 * failure; the entry's kind is KIND_OTHER when the key is none the run replays (the Python path's). */
static int32_t run_key_of(run_table *t, const unsigned char *kp, Py_ssize_t klen, PyObject *keys, PyObject *wanted,
                          PyObject *skip)
{
    uint64_t h = key_hash(kp, klen);
    int32_t guess = t->last >= 0 ? t->succ[t->last] : -1;
    if (guess >= 0 && run_same(&t->keys[guess], kp, klen, h))
        return run_seen(t, guess);
    if (t->nkeys >= t->kcap && run_grow(t) < 0)
        return -1;
    Py_ssize_t i = run_slot(t, kp, klen, h);
    if (t->index[i] >= 0)
        return run_seen(t, t->index[i]);
    if (klen > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "key too long");
        return -1;
    }
    PyObject *kb = PyBytes_FromStringAndSize((const char *)kp, klen);
    if (kb == NULL)
        return -1;
    PyObject *k = PyDict_GetItemWithError(keys, kb);
    int failed = 0;
    if (k == NULL && !PyErr_Occurred()) {
        PyObject *dec = commit_key(kp, klen);
        if (dec != NULL) {
            int want = 1;
            if (wanted != Py_None)
                want = PySet_Contains(wanted, PyTuple_CheckExact(dec) ? PyTuple_GET_ITEM(dec, 0) : dec);
            if (want < 0 || PyDict_SetItem(keys, kb, want ? dec : skip) < 0)
                failed = 1;
            else
                k = PyDict_GetItemWithError(keys, kb);
            Py_DECREF(dec);
        } else if (PyErr_Occurred()) {
            failed = 1;
        }
    } else if (k == NULL) {
        failed = 1;
    }
    Py_DECREF(kb);
    if (failed || (k == NULL && PyErr_Occurred()))
        return -1;
    run_key *rk = &t->keys[t->nkeys];
    rk->h = h;
    rk->klen = (int32_t)klen;
    rk->kind = k == NULL ? KIND_OTHER
               : k == skip ? KIND_SKIP
               : PyUnicode_CheckExact(k) ? KIND_GROUP
               : PyTuple_CheckExact(k) ? KIND_COMMIT : KIND_OTHER;
    rk->owner = -1;
    rk->k = k;
    rk->kp = kp;
    memcpy(rk->head, kp, (size_t)(klen < RUN_INLINE ? klen : RUN_INLINE));
    t->succ[t->nkeys] = -1;
    t->index[i] = (int32_t)t->nkeys;
    return run_seen(t, (int32_t)t->nkeys++);
}

/* Record a commit of the key entry e (an offset commit key) as its latest of the run. */
static int run_put(run_table *t, int32_t e, const unsigned char *value, Py_ssize_t vlen, int64_t offset,
                   int64_t base, int64_t pid)
{
    run_key *rk = &t->keys[e];
    if (rk->owner < 0) { /* the key's first commit in this run: whose entry keeps its latest? */
        if (t->by_value == NULL && (t->by_value = PyDict_New()) == NULL)
            return -1;
        PyObject *known = PyDict_GetItemWithError(t->by_value, rk->k);
        if (known != NULL) {
            rk->owner = (int32_t)PyLong_AsLong(known);
        } else if (PyErr_Occurred()) {
            return -1;
        } else {
            PyObject *at = PyLong_FromLong(e);
            int err = at == NULL || PyDict_SetItem(t->by_value, rk->k, at) < 0;
            Py_XDECREF(at);
            if (err)
                return -1;
            rk->owner = e;
            t->order[t->n++] = e;
        }
    }
    run_key *o = rk->owner == e ? rk : &t->keys[rk->owner];
    o->value = value;
    o->vlen = (int32_t)vlen;
    o->offset = offset;
    o->base = base;
    o->pid = pid;
    return 0;
}

static void run_free(run_table *t)
{
    PyMem_Free(t->keys);
    PyMem_Free(t->index);
    PyMem_Free(t->order);
    PyMem_Free(t->succ);
    Py_XDECREF(t->by_value);
}

/* loaded[k] = (value, offset, base, pid) for every key of the run, in first-write order */
static int latest_flush(run_table *t, PyObject *loaded)
{
    for (Py_ssize_t i = 0; i < t->n; i++) {
        run_key *e = &t->keys[t->order[i]];
        PyObject *items[4] = {PyBytes_FromStringAndSize((const char *)e->value, e->vlen), PyLong_FromLongLong(e->offset),
                              PyLong_FromLongLong(e->base), PyLong_FromLongLong(e->pid)};
        int bad = items[0] == NULL || items[1] == NULL || items[2] == NULL || items[3] == NULL;
        PyObject *old = bad ? NULL : PyDict_GetItemWithError(loaded, e->k);
        if (!bad && old != NULL && PyTuple_CheckExact(old) && PyTuple_GET_SIZE(old) == 4 && Py_REFCNT(old) == 1) {
            /* the dict holds the only reference to the superseded (value, offset, base, pid): reuse it */
            for (int j = 0; j < 4; j++)
                Py_SETREF(PyTuple_GET_ITEM(old, j), items[j]);
            continue;
        }
        PyObject *raw = bad || (old == NULL && PyErr_Occurred()) ? NULL : PyTuple_Pack(4, items[0], items[1], items[2],
                                                                                           items[3]);
        for (int j = 0; j < 4; j++)
            Py_XDECREF(items[j]);
        if (raw == NULL || PyDict_SetItem(loaded, e->k, raw) < 0) {
            Py_XDECREF(raw);
            return -1;
        }
        Py_DECREF(raw);
    }
    t->n = 0;
    return 0;
}

/* offsets_replay_run(buf, pos, end, start, keys, loaded, groups, removed, wanted, skip[, release])
 *   -> (pos, records)
 *
 * _PartitionReplay.batch over a run of plain v2 batches (no codec, not transactional, not control)
 * whose keys are offset commit or group metadata keys (cached in `keys`, or versions 0-2 with ASCII
 * names, cached here the way _PartitionReplay._key caches them) or passed over (`skip`), with no
 * offset commit tombstones: sets loaded[(group, topic, partition)] = (value, offset, base offset,
 * producer id) (once per key, when the run ends), and groups[group] = value (discarding it from
 * `removed`) or, for a group tombstone, deletes it and adds it to `removed`.  Batches that end
 * before `start` (the log start offset) are passed over.  It stops before the first other batch,
 * having changed nothing for it, and returns its position and the records replayed.  `release`
 * (MappedFile.release, or None) is called with the position every 32 MiB of a long run. */
static PyObject *py_offsets_replay_run(PyObject *self, PyObject *args)
{
    Py_buffer b;
    Py_ssize_t pos, end;
    long long start;
    PyObject *keys, *loaded, *groups, *removed, *wanted, *skip, *release = Py_None;
    if (!PyArg_ParseTuple(args, "y*nnLO!O!O!O!OO|O", &b, &pos, &end, &start, &PyDict_Type, &keys, &PyDict_Type,
                          &loaded, &PyDict_Type, &groups, &PySet_Type, &removed, &wanted, &skip, &release))
        return NULL;
    if (wanted != Py_None && !PyAnySet_Check(wanted)) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_TypeError, "wanted must be a set or None");
        return NULL;
    }
    if (pos < 0 || end > b.len)
        end = pos; /* nothing to do: the Python walk */
    const unsigned char *buf = b.buf;
    replay_rec *recs = NULL;
    run_table table = {NULL, 0, 0, NULL, 0, NULL, 0, NULL, -1, NULL};
    Py_ssize_t released = pos;
    Py_ssize_t cap = 0;
    long long nrec = 0;
    int failed = 0;
    while (pos >= 0 && end - pos > 17) {
        const unsigned char *d = buf + pos;
        int32_t size = be32(d + 8);
        if (size < 61 - 12 || size > end - pos - 12 || d[16] != 2)
            break;
        Py_ssize_t total = (Py_ssize_t)size + 12;
        int64_t base = be64(d);
        int32_t last_delta = be32(d + 23);
        if ((i128)base + last_delta + 1 <= start) {
            pos += total;
            continue;
        }
        int16_t attrs = be16(d + 21);
        int32_t count = be32(d + 57);
        if ((attrs & 0x37) || count <= 0 || count > (total - 61) / 7 || base > INT64_MAX / 2 || base < INT64_MIN / 2)
            break;
        if (count > cap) {
            replay_rec *grown = PyMem_Realloc(recs, sizeof(replay_rec) * (size_t)count);
            if (grown == NULL) {
                PyErr_NoMemory();
                failed = 1;
                break;
            }
            recs = grown;
            cap = count;
        }
        if (parse_replay_records(d, total, count, base, recs) < 0)
            break;
        /* every key known and replayable before anything changes */
        int ok = 1;
        for (int32_t i = 0; i < count; i++) {
            replay_rec *r = &recs[i];
            r->rk = -1;
            if (r->offset < start)
                continue;
            if (r->klen < 0) {
                ok = 0;
                break;
            }
            int32_t rk = run_key_of(&table, d + r->key, r->klen, keys, wanted, skip);
            if (rk < 0) {
                failed = 1;
                break;
            }
            int kind = table.keys[rk].kind;
            if (kind == KIND_OTHER || (kind == KIND_COMMIT && r->vlen < 0)) {
                ok = 0;
                break;
            }
            r->rk = rk;
            r->kind = (int8_t)kind;
        }
        if (failed || !ok)
            break;
        int64_t producer_id = be64(d + 43);
        for (int32_t i = 0; i < count; i++) {
            replay_rec *r = &recs[i];
            if (r->offset < start)
                continue;
            nrec++;
            if (r->kind == KIND_SKIP)
                continue;
            if (r->kind == KIND_GROUP) {
                PyObject *k = table.keys[r->rk].k; /* group metadata: kept as bytes, a tombstone deletes the group */
                int err;
                if (r->vlen < 0) {
                    int has = PyDict_Contains(groups, k);
                    err = has < 0 || (has && PyDict_DelItem(groups, k) < 0) || PySet_Add(removed, k) < 0;
                } else {
                    PyObject *value = PyBytes_FromStringAndSize((const char *)d + r->value, r->vlen);
                    err = value == NULL || PySet_Discard(removed, k) < 0 || PyDict_SetItem(groups, k, value) < 0;
                    Py_XDECREF(value);
                }
                if (err) {
                    failed = 1;
                    break;
                }
                continue;
            }
            if (run_put(&table, r->rk, d + r->value, r->vlen, r->offset, base, producer_id) < 0) {
                failed = 1;
                break;
            }
        }
        if (failed)
            break;
        pos += total;
        if (release != Py_None && pos - released >= RUN_RELEASE_EVERY) {
            /* MappedFile.release: resident memory stays flat; the latest values it drops are mapped
             * back in when the run ends */
            PyObject *res = PyObject_CallFunction(release, "n", pos);
            if (res == NULL) {
                failed = 1;
                break;
            }
            Py_DECREF(res);
            released = pos;
        }
    }
    if (!failed && latest_flush(&table, loaded) < 0)
        failed = 1;
    run_free(&table);
    PyMem_Free(recs);
    PyBuffer_Release(&b);
    if (failed)
        return NULL;
    return Py_BuildValue("(nL)", pos, nrec);
}

/* offset_commits(loaded, pos, log_partition, cls, out) -> (pos, key, raw) or (pos, None, None)
 *
 * _PartitionReplay.result's loop over `loaded` ((group, topic, partition) -> (value, offset, batch
 * base offset, producer id)) from the dict position `pos`: out[key] = cls(group, topic, partition,
 * offset, metadata, commit timestamp, expire timestamp, leader epoch, log_partition, offset in the
 * log, batch base offset, producer id) (`cls`: OffsetCommit, a 12-field named tuple) for each value
 * the compiled decoder reads; it returns at the first one it does not (with the position after it,
 * for the Python decoder) or at the end.  `loaded` must not change between calls. */
static PyObject *py_offset_commits(PyObject *self, PyObject *args)
{
    PyObject *loaded, *cls, *out, *lp;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "O!nO!OO!", &PyDict_Type, &loaded, &pos, &PyLong_Type, &lp, &cls, &PyDict_Type, &out))
        return NULL;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "cls must be a tuple type");
        return NULL;
    }
    PyTypeObject *tp = (PyTypeObject *)cls;
    PyObject *k, *raw;
    if (pos < 0)
        pos = 0;
    while (PyDict_Next(loaded, &pos, &k, &raw)) {
        PyObject *fields = NULL;
        if (PyTuple_CheckExact(k) && PyTuple_GET_SIZE(k) == 3 && PyTuple_CheckExact(raw) && PyTuple_GET_SIZE(raw) == 4
            && PyBytes_CheckExact(PyTuple_GET_ITEM(raw, 0))) {
            PyObject *value = PyTuple_GET_ITEM(raw, 0);
            fields = commit_value((const unsigned char *)PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value));
        }
        if (fields == NULL) {
            if (PyErr_Occurred())
                return NULL;
            return Py_BuildValue("(nOO)", pos, k, raw);
        }
        PyObject *c = tp->tp_alloc(tp, 12);
        if (c == NULL) {
            Py_DECREF(fields);
            return NULL;
        }
        PyObject *items[12] = {PyTuple_GET_ITEM(k, 0), PyTuple_GET_ITEM(k, 1), PyTuple_GET_ITEM(k, 2),
                               PyTuple_GET_ITEM(fields, 0), PyTuple_GET_ITEM(fields, 1), PyTuple_GET_ITEM(fields, 2),
                               PyTuple_GET_ITEM(fields, 3), PyTuple_GET_ITEM(fields, 4), lp,
                               PyTuple_GET_ITEM(raw, 1), PyTuple_GET_ITEM(raw, 2), PyTuple_GET_ITEM(raw, 3)};
        for (int j = 0; j < 12; j++) {
            Py_INCREF(items[j]);
            PyTuple_SET_ITEM(c, j, items[j]);
        }
        Py_DECREF(fields);
        int err = PyDict_SetItem(out, k, c);
        Py_DECREF(c);
        if (err < 0)
            return NULL;
    }
    return Py_BuildValue("(nOO)", pos, Py_None, Py_None);
}

/* ---------------------------------------------------------------------------------------------
 * MD5 of many key slices (kafkatool.ops.compact: the offset map stores keys' MD5 digests)
 * ------------------------------------------------------------------------------------------- */

static uint32_t md5_k[64];
static void md5_init(void)
{
    for (int i = 0; i < 64; i++) /* RFC 1321: the integer part of 2^32 * |sin(i + 1)| */
        md5_k[i] = (uint32_t)(fabs(sin((double)(i + 1))) * 4294967296.0);
}

/* One 64-byte block, the 64 steps written out (constant shifts and message indices: about twice as
 * fast as a loop choosing them, and MD5 was a fifth of the cleaner's offset-map pass). */
#define MD5_F(x, y, z) (((x) & (y)) | (~(x) & (z)))
#define MD5_G(x, y, z) (((z) & (x)) | (~(z) & (y)))
#define MD5_H(x, y, z) ((x) ^ (y) ^ (z))
#define MD5_I(x, y, z) ((y) ^ ((x) | ~(z)))
#define MD5_STEP(f, a, b, c, d, g, i, s) /* a, b, c, d, m: uint32_t, or vectors of them (md5_lanes) */     \
    do {                                                                                                  \
        __typeof__(a) t_ = (a) + f((b), (c), (d)) + md5_k[i] + m[g];                                      \
        (a) = (b) + ((t_ << (s)) | (t_ >> (32 - (s))));                                                   \
    } while (0)
#define MD5_ROUND4(f, i, g0, g1, g2, g3, s0, s1, s2, s3)                                                   \
    MD5_STEP(f, a, b, c, d, g0, i, s0);                                                                   \
    MD5_STEP(f, d, a, b, c, g1, i + 1, s1);                                                               \
    MD5_STEP(f, c, d, a, b, g2, i + 2, s2);                                                               \
    MD5_STEP(f, b, c, d, a, g3, i + 3, s3)

#define MD5_64_STEPS()                                                                                     \
    do {                                                                                                  \
        MD5_ROUND4(MD5_F, 0, 0, 1, 2, 3, 7, 12, 17, 22);                                                  \
        MD5_ROUND4(MD5_F, 4, 4, 5, 6, 7, 7, 12, 17, 22);                                                  \
        MD5_ROUND4(MD5_F, 8, 8, 9, 10, 11, 7, 12, 17, 22);                                                \
        MD5_ROUND4(MD5_F, 12, 12, 13, 14, 15, 7, 12, 17, 22);                                             \
        MD5_ROUND4(MD5_G, 16, 1, 6, 11, 0, 5, 9, 14, 20);                                                 \
        MD5_ROUND4(MD5_G, 20, 5, 10, 15, 4, 5, 9, 14, 20);                                                \
        MD5_ROUND4(MD5_G, 24, 9, 14, 3, 8, 5, 9, 14, 20);                                                 \
        MD5_ROUND4(MD5_G, 28, 13, 2, 7, 12, 5, 9, 14, 20);                                                \
        MD5_ROUND4(MD5_H, 32, 5, 8, 11, 14, 4, 11, 16, 23);                                               \
        MD5_ROUND4(MD5_H, 36, 1, 4, 7, 10, 4, 11, 16, 23);                                                \
        MD5_ROUND4(MD5_H, 40, 13, 0, 3, 6, 4, 11, 16, 23);                                                \
        MD5_ROUND4(MD5_H, 44, 9, 12, 15, 2, 4, 11, 16, 23);                                               \
        MD5_ROUND4(MD5_I, 48, 0, 7, 14, 5, 6, 10, 15, 21);                                                \
        MD5_ROUND4(MD5_I, 52, 12, 3, 10, 1, 6, 10, 15, 21);                                               \
        MD5_ROUND4(MD5_I, 56, 8, 15, 6, 13, 6, 10, 15, 21);                                               \
        MD5_ROUND4(MD5_I, 60, 4, 11, 2, 9, 6, 10, 15, 21);                                                \
    } while (0)

static void md5_block(uint32_t h[4], const unsigned char *p)
{
    uint32_t m[16];
    for (int i = 0; i < 16; i++)
        m[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
               (uint32_t)p[4 * i + 3] << 24;
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
    MD5_64_STEPS();
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
}

static void md5(const unsigned char *p, size_t n, unsigned char out[16])
{
    uint32_t h[4] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};
    size_t full = n & ~(size_t)63;
    for (size_t off = 0; off < full; off += 64)
        md5_block(h, p + off);
    unsigned char tail[128];
    size_t rem = n - full, tl = rem < 56 ? 64 : 128;
    memcpy(tail, p + full, rem);
    tail[rem] = 0x80;
    memset(tail + rem + 1, 0, tl - rem - 1);
    uint64_t bits = (uint64_t)n * 8;
    for (int i = 0; i < 8; i++)
        tail[tl - 8 + i] = (unsigned char)(bits >> (8 * i));
    md5_block(h, tail);
    if (tl == 128)
        md5_block(h, tail + 64);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = (unsigned char)(h[i] >> (8 * j));
}

/* Eight short messages (< 56 bytes: one padded block each) at once, one per 32-bit lane of a vector
 * (GCC's vector extension; AVX2 where the CPU has it, else two SSE2 registers): MD5 is one long chain
 * of dependent steps, so a message at a time leaves the core mostly idle, and offset-map keys are nearly
 * always this short.  The steps are md5_block's (MD5_64_STEPS on vectors). */
#if defined(__GNUC__) && defined(__x86_64__)
#define MD5_LANES 8
typedef uint32_t md5_vec __attribute__((vector_size(4 * MD5_LANES)));

#if !defined(__clang__) && defined(__GLIBC__) /* target clones are picked by an ifunc (glibc) */
__attribute__((target_clones("avx2", "default")))
#endif
static void md5_lanes(const unsigned char *msg[MD5_LANES], const size_t len[MD5_LANES], unsigned char *out[MD5_LANES])
{
    unsigned char blk[64];
    md5_vec m[16];
    for (int l = 0; l < MD5_LANES; l++) {
        memset(blk, 0, 64);
        memcpy(blk, msg[l], len[l]);
        blk[len[l]] = 0x80;
        uint64_t bits = (uint64_t)len[l] * 8;
        for (int i = 0; i < 8; i++)
            blk[56 + i] = (unsigned char)(bits >> (8 * i));
        uint32_t w[16];
        memcpy(w, blk, 64); /* MD5's words are little-endian, as x86's */
        for (int j = 0; j < 16; j++)
            m[j][l] = w[j];
    }
    const md5_vec zero = {0};
    const md5_vec a0 = zero + 0x67452301u, b0 = zero + 0xefcdab89u, c0 = zero + 0x98badcfeu, d0 = zero + 0x10325476u;
    md5_vec a = a0, b = b0, c = c0, d = d0;
    MD5_64_STEPS();
    a += a0;
    b += b0;
    c += c0;
    d += d0;
    for (int l = 0; l < MD5_LANES; l++) {
        uint32_t h[4] = {a[l], b[l], c[l], d[l]};
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                out[l][4 * i + j] = (unsigned char)(h[i] >> (8 * j));
    }
}
#endif

/* md5_slices(buf, starts, ends) -> bytes: the MD5 digests of buf[s:e] for the native int64 pairs of
 * `starts`/`ends` (bytes of equal length), 16 bytes each, slices clamped as Python clamps them; None
 * when a position is negative (Python's slice would count from the end: its own loop does that). */
static PyObject *py_md5_slices(PyObject *self, PyObject *args)
{
    Py_buffer b, s, e;
    if (!PyArg_ParseTuple(args, "y*y*y*", &b, &s, &e))
        return NULL;
    PyObject *out = NULL;
    Py_ssize_t n = s.len / 8;
    if (s.len != e.len || s.len % 8) {
        PyErr_SetString(PyExc_ValueError, "starts and ends must be int64 arrays of one length");
        goto done;
    }
    const char *sp = s.buf, *ep = e.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t k0, k1;
        memcpy(&k0, sp + 8 * i, 8);
        memcpy(&k1, ep + 8 * i, 8);
        if (k0 < 0 || k1 < 0) {
            out = Py_NewRef(Py_None);
            goto done;
        }
    }
    out = PyBytes_FromStringAndSize(NULL, n * 16);
    if (out == NULL)
        goto done;
    unsigned char *dst = (unsigned char *)PyBytes_AS_STRING(out);
    const unsigned char *src = b.buf;
    Py_BEGIN_ALLOW_THREADS
#ifdef MD5_LANES
    const unsigned char *msg[MD5_LANES];
    size_t len[MD5_LANES];
    unsigned char *to[MD5_LANES];
    int queued = 0; /* short messages waiting for a full set of lanes */
#endif
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t k0, k1;
        memcpy(&k0, sp + 8 * i, 8);
        memcpy(&k1, ep + 8 * i, 8);
        if (k1 > b.len)
            k1 = b.len;
        if (k0 > k1)
            k0 = k1;
#ifdef MD5_LANES
        if (k1 - k0 < 56) {
            msg[queued] = src + k0;
            len[queued] = (size_t)(k1 - k0);
            to[queued] = dst + 16 * i;
            if (++queued == MD5_LANES) {
                md5_lanes(msg, len, to);
                queued = 0;
            }
            continue;
        }
#endif
        md5(src + k0, (size_t)(k1 - k0), dst + 16 * i);
    }
#ifdef MD5_LANES
    for (int q = 0; q < queued; q++)
        md5(msg[q], len[q], to[q]);
#endif
    Py_END_ALLOW_THREADS
done:
    PyBuffer_Release(&b);
    PyBuffer_Release(&s);
    PyBuffer_Release(&e);
    return out;
}

/* walk_record_starts(buf, spans) -> (starts, walked): step 2 of kafkatool.ops.compact.keys'
 * _decode_key_columns_round.  `spans` holds native int64 triples (data start, data end, record
 * count); each span's records are walked from one record's length (a varint of up to 3 bytes, read
 * as that loop reads it) to the next.  A span that cannot hold its records, whose walk runs off the
 * buffer or meets a longer length is not walked (b"\0" in `walked`, no starts); the others give
 * `count` starts (native int64, in a bytearray: the caller clamps them in place) and b"\1".  None for
 * a negative start or count (never made by the caller): its Python loop then walks. */
static PyObject *py_walk_record_starts(PyObject *self, PyObject *args)
{
    Py_buffer b, sp;
    if (!PyArg_ParseTuple(args, "y*y*", &b, &sp))
        return NULL;
    PyObject *starts = NULL, *walked = NULL, *out = NULL;
    Py_ssize_t nspans = sp.len / 24, total = 0, used = 0;
    if (sp.len % 24) {
        PyErr_SetString(PyExc_ValueError, "spans must be int64 triples");
        goto done;
    }
    const char *spp = sp.buf;
    for (Py_ssize_t i = 0; i < nspans; i++) {
        int64_t t[3];
        memcpy(t, spp + 24 * i, 24);
        if (t[0] < 0 || t[2] < 0 || t[2] > PY_SSIZE_T_MAX / 16 - total) {
            out = Py_NewRef(Py_None); /* a negative position or count: the Python loop */
            goto done;
        }
        if ((i128)t[2] * 7 <= (i128)t[1] - t[0]) /* MIN_V2_RECORD_SIZE: else the span is not walked */
            total += (Py_ssize_t)t[2];
    }
    starts = PyByteArray_FromStringAndSize(NULL, total * 8);
    walked = PyBytes_FromStringAndSize(NULL, nspans);
    if (starts == NULL || walked == NULL)
        goto done;
    char *dst = PyByteArray_AS_STRING(starts), *wk = PyBytes_AS_STRING(walked);
    const unsigned char *d = b.buf;
    const i128 n = b.len;
    for (Py_ssize_t i = 0; i < nspans; i++) {
        int64_t t[3];
        memcpy(t, spp + 24 * i, 24);
        wk[i] = 0;
        if ((i128)t[2] * 7 > (i128)t[1] - t[0])
            continue;
        i128 at = t[0];
        Py_ssize_t first = used;
        int ok = 1;
        for (int64_t r = 0; r < t[2]; r++) {
            unsigned c, c2, c3;
            if (at >= n) { /* Python's IndexError */
                ok = 0;
                break;
            }
            int64_t a64 = (int64_t)at;
            memcpy(dst + 8 * used++, &a64, 8);
            c = d[(Py_ssize_t)at];
            if (c < 0x80) {
                at += 1 + (c >> 1);
                continue;
            }
            if (at + 1 >= n) {
                ok = 0;
                break;
            }
            c2 = d[(Py_ssize_t)at + 1];
            if (c2 < 0x80) {
                at += 2 + (((c & 0x7F) >> 1) | (c2 << 6));
                continue;
            }
            if (at + 2 >= n || (c3 = d[(Py_ssize_t)at + 2]) >= 0x80) {
                ok = 0;
                break;
            }
            at += 3 + (((c & 0x7F) >> 1) | ((c2 & 0x7F) << 6) | (c3 << 13));
        }
        if (!ok) {
            used = first;
            continue;
        }
        wk[i] = 1;
    }
    if (PyByteArray_Resize(starts, used * 8) < 0)
        goto done;
    out = PyTuple_Pack(2, starts, walked);
done:
    Py_XDECREF(starts);
    Py_XDECREF(walked);
    PyBuffer_Release(&b);
    PyBuffer_Release(&sp);
    return out;
}

/* A zig-zag varint of at most 3 bytes at d[*p] (what keys.py's _varints reads); 0 when it is longer or
 * runs past n (the record is then damaged: bytes past a good record's end are never needed). */
static inline int kf_varint(const unsigned char *d, int64_t n, int64_t *p, int32_t *out)
{
    int64_t at = *p;
    uint32_t raw;
    if (at >= n)
        return 0;
    raw = d[at] & 0x7F;
    if (d[at] & 0x80) {
        if (at + 1 >= n)
            return 0;
        raw |= (uint32_t)(d[at + 1] & 0x7F) << 7;
        if (d[at + 1] & 0x80) {
            if (at + 2 >= n || d[at + 2] & 0x80)
                return 0;
            raw |= (uint32_t)d[at + 2] << 14;
            at++;
        }
        at++;
    }
    *p = at + 1;
    *out = (int32_t)(raw >> 1) ^ -(int32_t)(raw & 1);
    return 1;
}

/* key_fields(buf, spans, starts) -> (offsets, null_keys, null_values, key_starts, key_ends, batch_ok)
 * Step 3 of kafkatool.ops.compact.keys' _decode_key_columns_round: `spans` holds native int64 quads
 * (data start, data end, record count, base offset) of the walked batches, `starts` their records'
 * starts (native int64, from walk_record_starts).  Each record is checked as the numpy step checks it
 * (varints of at most 3 bytes, lengths >= -1, at most KF_MAX_HEADERS headers with key lengths >= 0,
 * inside its batch, ending where its length says
 * and where the next record starts); the columns come back as native int64 / bool bytes, and
 * batch_ok holds b"\1" for each batch whose records all check out (the others' columns are not used). */
#define KF_MAX_HEADERS 64 /* keys.MAX_FAST_HEADERS: records with more go to the one-by-one decoder */

static PyObject *py_key_fields(PyObject *self, PyObject *args)
{
    Py_buffer b, sp, st;
    if (!PyArg_ParseTuple(args, "y*y*y*", &b, &sp, &st))
        return NULL;
    PyObject *cols[6] = {NULL, NULL, NULL, NULL, NULL, NULL}, *out = NULL;
    Py_ssize_t nspans = sp.len / 32, m = st.len / 8, total = 0;
    const char *spp = sp.buf;
    if (sp.len % 32 || st.len % 8) {
        PyErr_SetString(PyExc_ValueError, "key_fields: spans must be int64 quads, starts int64");
        goto done;
    }
    for (Py_ssize_t i = 0; i < nspans; i++) {
        int64_t t[4];
        memcpy(t, spp + 32 * i, 32);
        if (t[2] < 0 || t[2] > m - total) {
            PyErr_SetString(PyExc_ValueError, "key_fields: the spans' counts do not add up to the starts");
            goto done;
        }
        total += (Py_ssize_t)t[2];
    }
    if (total != m) {
        PyErr_SetString(PyExc_ValueError, "key_fields: the spans' counts do not add up to the starts");
        goto done;
    }
    cols[0] = PyBytes_FromStringAndSize(NULL, 8 * m);
    cols[1] = PyBytes_FromStringAndSize(NULL, m);
    cols[2] = PyBytes_FromStringAndSize(NULL, m);
    cols[3] = PyBytes_FromStringAndSize(NULL, 8 * m);
    cols[4] = PyBytes_FromStringAndSize(NULL, 8 * m);
    cols[5] = PyBytes_FromStringAndSize(NULL, nspans);
    for (int i = 0; i < 6; i++)
        if (cols[i] == NULL)
            goto done;
    {
        int64_t *offsets = (int64_t *)PyBytes_AS_STRING(cols[0]);
        char *null_keys = PyBytes_AS_STRING(cols[1]), *null_values = PyBytes_AS_STRING(cols[2]);
        int64_t *key_starts = (int64_t *)PyBytes_AS_STRING(cols[3]), *key_ends = (int64_t *)PyBytes_AS_STRING(cols[4]);
        char *ok = PyBytes_AS_STRING(cols[5]);
        const unsigned char *d = b.buf;
        const int64_t n = b.len;
        const char *sv = st.buf;
        Py_ssize_t r = 0;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < nspans; i++) {
            int64_t t[4];
            memcpy(t, spp + 32 * i, 32);
            int good = 1;
            for (int64_t j = 0; j < t[2]; j++, r++) {
                int64_t s, p, next = -1, rec_end;
                int32_t length, ts, delta, klen, vlen;
                memcpy(&s, sv + 8 * r, 8);
                if (j + 1 < t[2])
                    memcpy(&next, sv + 8 * (r + 1), 8);
                offsets[r] = 0;
                null_keys[r] = null_values[r] = 0;
                key_starts[r] = key_ends[r] = 0;
                if (!good)
                    continue;
                p = s;
                if (s < t[0] || s >= n || !kf_varint(d, n, &p, &length)) {
                    good = 0;
                    continue;
                }
                rec_end = p + length;
                p++; /* the attributes byte */
                if (!kf_varint(d, n, &p, &ts) || !kf_varint(d, n, &p, &delta) || !kf_varint(d, n, &p, &klen) ||
                    klen < -1) {
                    good = 0;
                    continue;
                }
                key_starts[r] = p;
                p += klen > 0 ? klen : 0;
                key_ends[r] = p;
                if (!kf_varint(d, n, &p, &vlen) || vlen < -1) {
                    good = 0;
                    continue;
                }
                p += vlen > 0 ? vlen : 0;
                int32_t hcount, hk, hv;
                if (!kf_varint(d, n, &p, &hcount) || hcount < 0 || hcount > KF_MAX_HEADERS) {
                    good = 0;
                    continue;
                }
                for (int32_t h = 0; h < hcount && good; h++) { /* key length >= 0, value length >= -1 */
                    good = kf_varint(d, n, &p, &hk) && hk >= 0;
                    p += good ? hk : 0;
                    good = good && kf_varint(d, n, &p, &hv) && hv >= -1;
                    p += good && hv > 0 ? hv : 0;
                }
                if (!good || rec_end > t[1] || p != rec_end || (next >= 0 && rec_end != next) ||
                    (j + 1 < t[2] && next < 0)) {
                    good = 0;
                    continue;
                }
                offsets[r] = t[3] + delta;
                null_keys[r] = klen == -1;
                null_values[r] = vlen == -1;
            }
            ok[i] = (char)good;
        }
        Py_END_ALLOW_THREADS
    }
    out = PyTuple_Pack(6, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5]);
done:
    for (int i = 0; i < 6; i++)
        Py_XDECREF(cols[i]);
    PyBuffer_Release(&b);
    PyBuffer_Release(&sp);
    PyBuffer_Release(&st);
    return out;
}

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

/* ---- the log cleaner's rebuild of a batch that loses records (Cleaner.buildRetainedRecordsInto) ---- */

/* A zig-zag varint of up to 10 bytes inside [*p, end), as kafkatool.log.varint.read_varint reads it
 * (a 10th byte's high bits fall off); 0 when it runs past end or is longer. */
static inline int rb_varlong(const unsigned char *d, Py_ssize_t end, Py_ssize_t *p, int64_t *out)
{
    uint64_t raw = 0;
    for (int shift = 0; shift <= 63; shift += 7) {
        if (*p >= end)
            return 0;
        unsigned b = d[(*p)++];
        raw |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
            return 1;
        }
    }
    return 0;
}

static inline unsigned char *rb_put_varlong(unsigned char *o, int64_t v)
{
    uint64_t raw = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    while (raw >= 0x80) {
        *o++ = (unsigned char)((raw & 0x7F) | 0x80);
        raw >>= 7;
    }
    *o++ = (unsigned char)raw;
    return o;
}

static inline int rb_varlong_size(int64_t v)
{
    uint64_t raw = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    int n = 1;
    while (raw >= 0x80) {
        raw >>= 7;
        n++;
    }
    return n;
}

typedef struct {
    int64_t ts, offset_delta;
    Py_ssize_t key, klen, value, vlen; /* positions in the buffer; a length of -1 is null */
    Py_ssize_t hdr, hlen;              /* the headers (count first) as they are re-encoded: copied */
} rb_record;

/* A varint inside [*p, end) as rb_varlong reads it, also 0 unless it is as short as encode_varint makes
 * it (so the bytes can be copied instead of re-encoded). */
static inline int rb_minimal(const unsigned char *d, Py_ssize_t end, Py_ssize_t *p, int64_t *out)
{
    Py_ssize_t at = *p;
    return rb_varlong(d, end, p, out) && *p - at == rb_varlong_size(*out);
}

/* Past the headers at *p (count, then key/value pairs) that end at rec_end; 0 unless each is as
 * encode_v2_batch re-encodes what Batch.records() decodes: minimal varints, key lengths >= 0 and ASCII
 * keys (a key is decoded to text and encoded again as UTF-8), value lengths >= -1. */
static int rb_headers(const unsigned char *d, Py_ssize_t rec_end, Py_ssize_t *p)
{
    int64_t count, klen, vlen;
    if (!rb_minimal(d, rec_end, p, &count) || count < 0)
        return 0;
    for (int64_t i = 0; i < count; i++) {
        if (!rb_minimal(d, rec_end, p, &klen) || klen < 0 || klen > rec_end - *p)
            return 0;
        for (int64_t k = 0; k < klen; k++)
            if (d[*p + k] & 0x80)
                return 0;
        *p += (Py_ssize_t)klen;
        if (!rb_minimal(d, rec_end, p, &vlen) || vlen < -1 || vlen > rec_end - *p)
            return 0;
        *p += vlen > 0 ? (Py_ssize_t)vlen : 0;
    }
    return 1;
}

static inline void rb_put_be(unsigned char *o, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        o[i] = (unsigned char)v;
        v >>= 8;
    }
}

/* rebuild_v2(buf, position, size, keep) -> (batch, max timestamp, last kept offset) or None
 * The v2 batch at buf[position:position + size] with only the records whose byte in `keep` is 1, encoded
 * as kafkatool.log.writer.encode_v2_batch encodes the records Batch.records() decodes (cleaner._rebuild
 * without a delete horizon): same base offset, last offset delta, producer fields and transactional
 * flag; base timestamp the least kept timestamp, max timestamp the greatest; each record re-encoded
 * (attributes 0, minimal varints).  None, for the Python path to decide, unless the batch is
 * uncompressed, create-time, not control, without a delete horizon, every record exactly as long as it
 * says with headers that re-encode to their own bytes (`rb_headers`), with `keep` one byte a record and
 * at least one kept. */
static PyObject *py_rebuild_v2(PyObject *self, PyObject *args)
{
    Py_buffer b, kp;
    Py_ssize_t pos, size;
    if (!PyArg_ParseTuple(args, "y*nny*", &b, &pos, &size, &kp))
        return NULL;
    PyObject *out = NULL, *batch = NULL;
    rb_record *recs = NULL;
    const unsigned char *d = b.buf, *keep = kp.buf;
    if (pos < 0 || size < 61 || pos > b.len - size || d[pos + 16] != 2)
        goto none;
    const unsigned char *h = d + pos;
    int attributes = (int)be16(h + 21);
    int64_t base_offset = be64(h), base_ts = be64(h + 27);
    int32_t count = be32(h + 57);
    if ((attributes & (0x07 | 0x08 | 0x20 | 0x40)) || count <= 0 || count != kp.len)
        goto none;
    recs = PyMem_Malloc(sizeof(rb_record) * (size_t)count);
    if (recs == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t p = pos + 61, end = pos + size, kept = 0;
    int64_t min_ts = INT64_MAX, max_ts = INT64_MIN, last_offset = 0;
    for (int32_t i = 0; i < count; i++) {
        int64_t length, ts_delta, offset_delta, klen, vlen;
        if (!rb_varlong(d, end, &p, &length) || length < 0 || length > end - p)
            goto none;
        Py_ssize_t rec_end = p + (Py_ssize_t)length;
        p++; /* attributes */
        if (!rb_varlong(d, rec_end, &p, &ts_delta) || !rb_varlong(d, rec_end, &p, &offset_delta) ||
            !rb_varlong(d, rec_end, &p, &klen) || klen < -1 || klen > rec_end - p)
            goto none;
        Py_ssize_t key = p;
        p += klen > 0 ? (Py_ssize_t)klen : 0;
        if (!rb_varlong(d, rec_end, &p, &vlen) || vlen < -1 || vlen > rec_end - p)
            goto none;
        Py_ssize_t value = p;
        p += vlen > 0 ? (Py_ssize_t)vlen : 0;
        Py_ssize_t hdr = p;
        if (!rb_headers(d, rec_end, &p) || p != rec_end)
            goto none;
        if (keep[i]) {
            rb_record *r = &recs[kept++];
            if (__builtin_add_overflow(base_ts, ts_delta, &r->ts) ||
                __builtin_add_overflow(base_offset, offset_delta, &last_offset))
                goto none;
            r->offset_delta = offset_delta;
            r->key = key;
            r->klen = klen;
            r->value = value;
            r->vlen = vlen;
            r->hdr = hdr;
            r->hlen = rec_end - hdr;
            if (r->ts < min_ts)
                min_ts = r->ts;
            if (r->ts > max_ts)
                max_ts = r->ts;
        }
    }
    if (p != end || kept == 0)
        goto none;
    Py_ssize_t total = 61;
    for (Py_ssize_t i = 0; i < kept; i++) {
        rb_record *r = &recs[i];
        int64_t ts_delta;
        if (__builtin_sub_overflow(r->ts, min_ts, &ts_delta))
            goto none;
        r->ts = ts_delta;
        int64_t body = 1 + rb_varlong_size(ts_delta) + rb_varlong_size(r->offset_delta) +
                       rb_varlong_size(r->klen) + (r->klen > 0 ? r->klen : 0) + rb_varlong_size(r->vlen) +
                       (r->vlen > 0 ? r->vlen : 0) + r->hlen;
        total += rb_varlong_size(body) + (Py_ssize_t)body;
    }
    if (total - 12 > INT32_MAX)
        goto none;
    batch = PyBytes_FromStringAndSize(NULL, total);
    if (batch == NULL)
        goto done;
    unsigned char *o = (unsigned char *)PyBytes_AS_STRING(batch);
    memcpy(o, h, 61); /* base offset, leader epoch, magic, last offset delta, producer fields: kept */
    rb_put_be(o + 8, (uint64_t)(total - 12), 4);
    rb_put_be(o + 21, (uint64_t)(attributes & 0x10), 2); /* only the transactional flag survives */
    rb_put_be(o + 27, (uint64_t)min_ts, 8);
    rb_put_be(o + 35, (uint64_t)max_ts, 8);
    rb_put_be(o + 57, (uint64_t)kept, 4);
    unsigned char *w = o + 61;
    for (Py_ssize_t i = 0; i < kept; i++) {
        rb_record *r = &recs[i];
        int64_t body = 1 + rb_varlong_size(r->ts) + rb_varlong_size(r->offset_delta) + rb_varlong_size(r->klen) +
                       (r->klen > 0 ? r->klen : 0) + rb_varlong_size(r->vlen) + (r->vlen > 0 ? r->vlen : 0) + r->hlen;
        w = rb_put_varlong(w, body);
        *w++ = 0;
        w = rb_put_varlong(w, r->ts);
        w = rb_put_varlong(w, r->offset_delta);
        w = rb_put_varlong(w, r->klen);
        if (r->klen > 0) {
            memcpy(w, d + r->key, (size_t)r->klen);
            w += r->klen;
        }
        w = rb_put_varlong(w, r->vlen);
        if (r->vlen > 0) {
            memcpy(w, d + r->value, (size_t)r->vlen);
            w += r->vlen;
        }
        memcpy(w, d + r->hdr, (size_t)r->hlen);
        w += r->hlen;
    }
    rb_put_be(o + 17, crc32c(o + 21, (size_t)(total - 21)), 4);
    out = Py_BuildValue("OLL", batch, (long long)max_ts, (long long)last_offset);
    goto done;
none:
    out = Py_NewRef(Py_None);
done:
    Py_XDECREF(batch);
    PyMem_Free(recs);
    PyBuffer_Release(&b);
    PyBuffer_Release(&kp);
    return out;
}

/* ---------------------------------------------------------------------------------------------
 * shallow_lines(buf, start, end, max_out, max_in) -> (lines, position, batches)
 *
 * dump-log's batch lines (ops.dumplog.batch_line, the reference) for a run of entries from
 * `start`, as one bytes object: v2 batches and v0/v1 messages, each CRC-checked the way
 * Batch.is_valid does (CRC-32C for v2, zlib's CRC32 for v0/v1).  The walk stops after `max_out`
 * bytes of lines or `max_in` bytes of input, at `end`, at a partial tail, and before any entry it
 * leaves to the Python walk: a corrupt size field, a v2/v1 entry below its header size, an
 * unknown codec, or a last offset past 64 bits.  The caller goes on from `position` in Python,
 * which prints or reports whatever made the walk stop.
 * ------------------------------------------------------------------------------------------- */

static uint32_t crc32_table[8][256]; /* CRC32 (zlib's polynomial), slicing-by-8 */

static void crc32_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        crc32_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc32_table[t][i] = (crc32_table[t - 1][i] >> 8) ^ crc32_table[0][crc32_table[t - 1][i] & 0xFF];
}

/* zlib.crc32(p[0:n]) */
static uint32_t crc32_ieee(const unsigned char *p, size_t n)
{
    uint32_t crc = 0xFFFFFFFFu;
#if PY_LITTLE_ENDIAN
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= crc;
        crc = crc32_table[7][w & 0xFF] ^ crc32_table[6][(w >> 8) & 0xFF] ^ crc32_table[5][(w >> 16) & 0xFF] ^
              crc32_table[4][(w >> 24) & 0xFF] ^ crc32_table[3][(w >> 32) & 0xFF] ^
              crc32_table[2][(w >> 40) & 0xFF] ^ crc32_table[1][(w >> 48) & 0xFF] ^ crc32_table[0][w >> 56];
        p += 8;
        n -= 8;
    }
#endif
    while (n--)
        crc = crc32_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

static const char *const CODEC_LABELS[5] = {"none", "gzip", "snappy", "lz4", "zstd"};

static int sb_str(sbuf *b, const char *s)
{
    return sb_put(b, s, strlen(s));
}

static PyObject *py_shallow_lines(PyObject *self, PyObject *args)
{
    Py_buffer b;
    Py_ssize_t start, end, max_out, max_in;
    if (!PyArg_ParseTuple(args, "y*nnnn", &b, &start, &end, &max_out, &max_in))
        return NULL;
    if (start < 0 || end > b.len || max_out < 0) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_ValueError, "shallow_lines: start/end outside the buffer");
        return NULL;
    }
    const unsigned char *d = b.buf;
    sbuf o;
    Py_ssize_t pos = start, n = 0;
    Py_ssize_t stop_in = max_in > PY_SSIZE_T_MAX - start ? PY_SSIZE_T_MAX : start + max_in;
    if (sb_init(&o, (size_t)max_out + 1024) < 0) {
        PyBuffer_Release(&b);
        return NULL;
    }
    while ((Py_ssize_t)o.n < max_out && pos < stop_in) {
        if (pos + 17 >= end) /* HEADER_SIZE_UP_TO_MAGIC: a partial tail */
            break;
        int64_t offset = be64(d + pos);
        int32_t size = be32(d + pos + 8);
        if (size < 14 || pos > end - 12 - (Py_ssize_t)size) /* corrupt size field, or a partial tail */
            break;
        Py_ssize_t total = (Py_ssize_t)size + 12;
        const unsigned char *p = d + pos;
        unsigned magic = p[16];
        int r = 0;
        if (magic >= 2) {
            if (total < 61)
                break;
            int32_t ple = be32(p + 12);
            uint32_t crc = (uint32_t)be32(p + 17);
            int attrs = (int16_t)((p[21] << 8) | p[22]);
            int32_t last_delta = be32(p + 23);
            int64_t base_ts = be64(p + 27), max_ts = be64(p + 35), pid = be64(p + 43);
            int epoch = (int16_t)((p[51] << 8) | p[52]);
            int32_t base_seq = be32(p + 53), count = be32(p + 57);
            int codec = attrs & 7;
            i128 last = (i128)offset + last_delta;
            if (codec >= 5 || last > INT64_MAX || last < INT64_MIN)
                break;
            int64_t last_seq = -1;
            if (base_seq != -1) /* record.increment_sequence */
                last_seq = (int64_t)base_seq > (int64_t)INT32_MAX - last_delta
                               ? (int64_t)last_delta - ((int64_t)INT32_MAX - base_seq) - 1
                               : (int64_t)base_seq + last_delta;
            int valid = crc == crc32c(p + 21, (size_t)(total - 21));
            r = sb_lit(&o, "baseOffset: ") || sb_ll(&o, offset) || sb_lit(&o, " lastOffset: ") ||
                sb_ll(&o, (long long)last) || sb_lit(&o, " count: ") || sb_ll(&o, count) ||
                sb_lit(&o, " baseSequence: ") || sb_ll(&o, base_seq) || sb_lit(&o, " lastSequence: ") ||
                sb_ll(&o, last_seq) || sb_lit(&o, " producerId: ") || sb_ll(&o, pid) ||
                sb_lit(&o, " producerEpoch: ") || sb_ll(&o, epoch) || sb_lit(&o, " partitionLeaderEpoch: ") ||
                sb_ll(&o, ple) || sb_lit(&o, " isTransactional: ") || sb_str(&o, attrs & 0x10 ? "true" : "false") ||
                sb_lit(&o, " isControl: ") || sb_str(&o, attrs & 0x20 ? "true" : "false") ||
                sb_lit(&o, " deleteHorizonMs: ") ||
                (attrs & 0x40 ? sb_lit(&o, "OptionalLong[") || sb_ll(&o, base_ts) || sb_lit(&o, "]")
                              : sb_lit(&o, "OptionalLong.empty")) ||
                sb_lit(&o, " position: ") || sb_ll(&o, pos) ||
                sb_str(&o, attrs & 0x08 ? " LogAppendTime: " : " CreateTime: ") || sb_ll(&o, max_ts) ||
                sb_lit(&o, " size: ") || sb_ll(&o, total) || sb_lit(&o, " magic: ") || sb_ll(&o, magic) ||
                sb_lit(&o, " compresscodec: ") || sb_str(&o, CODEC_LABELS[codec]) || sb_lit(&o, " crc: ") ||
                sb_ll(&o, crc) || sb_str(&o, valid ? " isvalid: true\n" : " isvalid: false\n");
        } else {
            uint32_t crc = (uint32_t)be32(p + 12);
            int attrs = p[17];
            int codec = attrs & 7;
            const char *ts_name = " NoTimestampType: ";
            int64_t ts = -1; /* NO_TIMESTAMP */
            if (magic == 1) {
                if (size < 22) /* V1_OVERHEAD */
                    break;
                ts_name = attrs & 0x08 ? " LogAppendTime: " : " CreateTime: ";
                ts = be64(p + 18);
            }
            if (codec >= 5)
                break;
            int valid = crc == crc32_ieee(p + 16, (size_t)(total - 16));
            r = sb_lit(&o, "offset: ") || sb_ll(&o, offset) || sb_lit(&o, " position: ") || sb_ll(&o, pos) ||
                sb_str(&o, ts_name) || sb_ll(&o, ts) || sb_lit(&o, " size: ") || sb_ll(&o, total) ||
                sb_lit(&o, " magic: ") || sb_ll(&o, magic) || sb_lit(&o, " compresscodec: ") ||
                sb_str(&o, CODEC_LABELS[codec]) || sb_lit(&o, " crc: ") || sb_ll(&o, crc) ||
                sb_str(&o, valid ? " isvalid: true\n" : " isvalid: false\n");
        }
        if (r) {
            PyBuffer_Release(&b);
            return NULL; /* sb_reserve freed the buffer and set MemoryError */
        }
        pos += total;
        n++;
    }
    PyBuffer_Release(&b);
    PyObject *lines = sb_finish(&o);
    if (lines == NULL)
        return NULL;
    return Py_BuildValue("Nnn", lines, pos, n);
}

/* ---- the log cleaner's batch header walk (kafkatool.ops.compact.scan) ---- */

static const char *const br_fields[] = {"buf", "position", "size", "magic", "base_offset", "last_offset", "crc",
                                        "attributes", "codec", "timestamp_type", "base_timestamp",
                                        "max_timestamp", "producer_id", "producer_epoch", "base_sequence",
                                        "partition_leader_epoch", "count", "view"};
#define BR_FIELDS ((int)(sizeof(br_fields) / sizeof(br_fields[0])))
static PyObject *br_names[BR_FIELDS];

/* batch_run(Batch, buf, view, start, end, max_batches, max_bytes) -> (batches, stop)
 * The batches kafkatool.log.records.read_batch_header reads one by one from `start`, as Batch objects
 * (`buf` and `view` set as BatchScan sets them), while each is a complete v2 batch (magic 2, at least
 * the 61-byte header, ending by `end`, last offset within 64 bits), up to max_batches of them or the
 * first that ends past start + max_bytes (one at least); `stop` is where the run stopped, for the
 * caller's Python reader to go on from there (partial tails, damaged frames, v0/v1, and their errors). */
static PyObject *py_batch_run(PyObject *self, PyObject *args)
{
    PyObject *type, *bufobj, *view;
    Py_buffer b;
    Py_ssize_t pos, end, max_batches, max_bytes;
    if (!PyArg_ParseTuple(args, "OOOnnnn", &type, &bufobj, &view, &pos, &end, &max_batches, &max_bytes))
        return NULL;
    if (!PyType_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "batch_run: the first argument must be the Batch class");
        return NULL;
    }
    if (PyObject_GetBuffer(bufobj, &b, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *list = NULL, *out = NULL;
    for (int i = 0; i < BR_FIELDS; i++)
        if (br_names[i] == NULL && (br_names[i] = PyUnicode_InternFromString(br_fields[i])) == NULL)
            goto done;
    if (end > b.len)
        end = b.len;
    if ((list = PyList_New(0)) == NULL)
        goto done;
    const unsigned char *d = b.buf;
    Py_ssize_t first = pos;
    while (pos >= 0 && PyList_GET_SIZE(list) < max_batches && pos + 17 < end) {
        const unsigned char *h = d + pos;
        int64_t base_offset = be64(h), last_offset;
        int32_t len = be32(h + 8), last_delta = be32(h + 23);
        if (h[16] != 2 || len < 61 - 12 || pos > end - 12 - len ||
            __builtin_add_overflow(base_offset, (int64_t)last_delta, &last_offset))
            break;
        if (PyList_GET_SIZE(list) > 0 && pos + 12 + len - first > max_bytes)
            break;
        int attrs = be16(h + 21);
        PyTypeObject *tp = (PyTypeObject *)type;
        PyObject *batch = tp->tp_alloc(tp, 0);
        if (batch == NULL)
            goto done;
        PyObject *v[BR_FIELDS] = {
            Py_NewRef(bufobj),
            PyLong_FromSsize_t(pos),
            PyLong_FromLong(len + 12),
            PyLong_FromLong(2),
            PyLong_FromLongLong(base_offset),
            PyLong_FromLongLong(last_offset),
            PyLong_FromUnsignedLong((uint32_t)be32(h + 17)),
            PyLong_FromLong(attrs),
            PyLong_FromLong(attrs & 0x07),
            PyLong_FromLong(attrs & 0x08 ? 1 : 0), /* TS_LOG_APPEND : TS_CREATE */
            PyLong_FromLongLong(be64(h + 27)),
            PyLong_FromLongLong(be64(h + 35)),
            PyLong_FromLongLong(be64(h + 43)),
            PyLong_FromLong(be16(h + 51)),
            PyLong_FromLong(be32(h + 53)),
            PyLong_FromLong(be32(h + 12)),
            PyLong_FromLong(be32(h + 57)),
            Py_NewRef(view),
        };
        int bad = 0;
        for (int i = 0; i < BR_FIELDS; i++) {
            if (!bad && (v[i] == NULL || PyObject_SetAttr(batch, br_names[i], v[i]) < 0))
                bad = 1;
            Py_XDECREF(v[i]);
        }
        if (bad || PyList_Append(list, batch) < 0) {
            Py_DECREF(batch);
            goto done;
        }
        Py_DECREF(batch);
        pos += 12 + (Py_ssize_t)len;
    }
    out = Py_BuildValue("On", list, pos);
done:
    Py_XDECREF(list);
    PyBuffer_Release(&b);
    return out;
}

/* ---------------------------------------------------------------------------------------------
 * heap_policy: glibc's heap thresholds, set once at start-up (kafkatool.heap)
 *
 * With glibc's defaults a buffer above the mmap threshold (128 KiB until the first such buffer is
 * freed) is mapped and unmapped on every batch, and heap space freed above the trim threshold is
 * handed back and taken again: each new page is zeroed by the kernel, which dominated dump-log's
 * time on small-record logs in some environments.  Fixed thresholds make that independent of
 * the environment and of the heap's layout.
 * ------------------------------------------------------------------------------------------- */

static PyObject *py_heap_policy(PyObject *self, PyObject *args)
{
    long long trim, top_pad, mmap_threshold;
    if (!PyArg_ParseTuple(args, "LLL", &trim, &top_pad, &mmap_threshold))
        return NULL;
#ifdef __GLIBC__
    int ok = mallopt(M_TRIM_THRESHOLD, (int)trim) && mallopt(M_TOP_PAD, (int)top_pad) &&
             mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold);
    return PyBool_FromLong(ok);
#else
    (void)trim, (void)top_pad, (void)mmap_threshold;
    Py_RETURN_FALSE;
#endif
}

/* ------------------------------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"crc32c", py_crc32c, METH_O, "CRC-32C of a bytes-like object."},
    {"verify_crcs", py_verify_crcs, METH_VARARGS,
     "verify_crcs(buf, start, end) -> (batches, valid bytes, bad position, None, or -1 at a legacy message)"},
    {"walk_v2_run", py_walk_v2_run, METH_VARARGS, "The recovery walk's fast path over plain v2 batches."},
    {"init", py_init, METH_VARARGS, "init(Record, CorruptRecordError, java_utf8)."},
    {"decode_v2_records", py_decode_v2_records, METH_VARARGS, "default_records.decode_v2_records, compiled."},
    {"v2_record_lines", py_v2_record_lines, METH_VARARGS, "dump-log's record lines of v2 data records."},
    {"offset_commit_key", py_offset_commit_key, METH_O, "A key v0/v1 as (group, topic, partition), v2 as the group."},
    {"offset_commit_value", py_offset_commit_value, METH_O, "An offset commit value v0-v4 as a tuple, or None."},
    {"walk_record_starts", py_walk_record_starts, METH_VARARGS, "The cleaner's walk from record length to record."},
    {"md5_slices", py_md5_slices, METH_VARARGS, "MD5 digests of many slices of one buffer, concatenated."},
    {"offset_map_put", py_offset_map_put, METH_VARARGS, "OffsetMap.put_until_full's loop, one key at a time."},
    {"key_fields", py_key_fields, METH_VARARGS, "The cleaner's key decoder: every walked record's fields, checked."},
    {"rebuild_v2", py_rebuild_v2, METH_VARARGS, "The cleaner's rebuild of a plain v2 batch that loses records."},
    {"batch_run", py_batch_run, METH_VARARGS, "The cleaner's walk over a run of complete v2 batch headers."},
    {"offsets_replay_run", py_offsets_replay_run, METH_VARARGS, "_PartitionReplay.batch over a run of plain batches."},
    {"shallow_lines", py_shallow_lines, METH_VARARGS, "dump-log's batch lines of a run of entries, CRC-checked."},
    {"offset_commits", py_offset_commits, METH_VARARGS, "_PartitionReplay.result's decoding of the latest commits."},
    {"heap_policy", py_heap_policy, METH_VARARGS, "heap_policy(trim, top_pad, mmap_threshold): glibc's mallopt."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kafkatool._speedups",
                                    "kafkatool's compiled core (see kafkatool.log.core).", -1, methods};

PyMODINIT_FUNC PyInit__speedups(void)
{
    crc_init();
    crc_zeros_tables(crc_long, CRC_LONG);
    crc_zeros_tables(crc_short, CRC_SHORT);
    crc32_init();
    md5_init();
    return PyModule_Create(&module);
}
