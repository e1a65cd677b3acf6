/* dump-log's output lines (ops/dumplog.py), built as bytes in C.
 *
 *   v2_record_lines(...)  LogDumper._v2_record_lines: the `| offset: ...` record lines of
 *                         --deep-iteration / --print-data-log, the same bytes.
 *   v2_raw_record_lines   the same lines read straight from the record bytes (no Record objects).
 *   deep_lines(...)       batch and record lines over a run of plain uncompressed v2 batches.
 *   shallow_lines(...)    the batch lines without --deep-iteration (ops/dumplog.batch_line over a
 *                         BatchScan, CRC-checked as Batch.is_valid): a run of entries; it stops before a
 *                         damaged frame or an unknown codec and leaves it to the Python walk.
 *
 * Printing is most of dump-log's time on a large log (gigabytes of text), so the lines are written
 * straight into a bytes object (sbuf) with no Python object per field.
 */
#include "core.h"

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

void dumplog_lines_init(void)
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

/* a v2 header the batch line can print: a known codec, a last offset within 64 bits */
static int v2_plain_header(const unsigned char *p, int64_t offset)
{
    int codec = ((p[21] << 8) | p[22]) & 7;
    i128 last = (i128)offset + be32(p + 23);
    return codec < 5 && last <= INT64_MAX && last >= INT64_MIN;
}

/* dump-log's line for the v2 batch at p (offset `offset`, `total` bytes, at file position pos), CRC-checked */
static int v2_batch_line(sbuf *o, const unsigned char *p, int64_t offset, Py_ssize_t total, Py_ssize_t pos, unsigned magic)
{
    int32_t ple = be32(p + 12);
    uint32_t crc = (uint32_t)be32(p + 17);
    int attrs = (int16_t)((p[21] << 8) | p[22]);
    int32_t last_delta = be32(p + 23);
    int64_t base_ts = be64(p + 27), max_ts = be64(p + 35), pid = be64(p + 43);
    int epoch = (int16_t)((p[51] << 8) | p[52]);
    int32_t base_seq = be32(p + 53), count = be32(p + 57);
    int codec = attrs & 7;
    i128 last = (i128)offset + last_delta;
    int64_t last_seq = -1;
    if (base_seq != -1) /* record.increment_sequence */
        last_seq = (int64_t)base_seq > (int64_t)INT32_MAX - last_delta
                       ? (int64_t)last_delta - ((int64_t)INT32_MAX - base_seq) - 1
                       : (int64_t)base_seq + last_delta;
    int valid = crc == crc32c(p + 21, (size_t)(total - 21));
    return sb_lit(o, "baseOffset: ") || sb_ll(o, offset) || sb_lit(o, " lastOffset: ") ||
           sb_ll(o, (long long)last) || sb_lit(o, " count: ") || sb_ll(o, count) ||
           sb_lit(o, " baseSequence: ") || sb_ll(o, base_seq) || sb_lit(o, " lastSequence: ") ||
           sb_ll(o, last_seq) || sb_lit(o, " producerId: ") || sb_ll(o, pid) ||
           sb_lit(o, " producerEpoch: ") || sb_ll(o, epoch) || sb_lit(o, " partitionLeaderEpoch: ") ||
           sb_ll(o, ple) || sb_lit(o, " isTransactional: ") || sb_str(o, attrs & 0x10 ? "true" : "false") ||
           sb_lit(o, " isControl: ") || sb_str(o, attrs & 0x20 ? "true" : "false") ||
           sb_lit(o, " deleteHorizonMs: ") ||
           (attrs & 0x40 ? sb_lit(o, "OptionalLong[") || sb_ll(o, base_ts) || sb_lit(o, "]")
                         : sb_lit(o, "OptionalLong.empty")) ||
           sb_lit(o, " position: ") || sb_ll(o, pos) ||
           sb_str(o, attrs & 0x08 ? " LogAppendTime: " : " CreateTime: ") || sb_ll(o, max_ts) ||
           sb_lit(o, " size: ") || sb_ll(o, total) || sb_lit(o, " magic: ") || sb_ll(o, magic) ||
           sb_lit(o, " compresscodec: ") || sb_str(o, CODEC_LABELS[codec]) || sb_lit(o, " crc: ") ||
           sb_ll(o, crc) || sb_str(o, valid ? " isvalid: true\n" : " isvalid: false\n");
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
            if (!v2_plain_header(p, offset))
                break;
            r = v2_batch_line(&o, p, offset, total, pos, magic);
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


/* ---------------------------------------------------------------------------------------------
 * v2_raw_record_lines: the same record lines, read straight from a batch's record bytes
 *
 * --deep-iteration only needs each record's offset, timestamp, sizes, sequence and header keys, and
 * --print-data-log its ASCII keys and values: decoding every record into a Record with its key and
 * value copied (8 GB of values on a 256 MiB lz4 log of small records) only to print their lengths
 * was most of deep mode's time.  This walks the bytes as default_records.decode_v2_records does and
 * writes the lines LogDumper._v2_record_lines would write for its Records.  It answers None for
 * anything it does not print exactly as that path would (damage of any kind, non-ASCII text to
 * print or header keys, offsets that are not consecutive, fields past 64 bits): the caller then
 * decodes the batch the reference way, which also reports the damage.
 * ------------------------------------------------------------------------------------------- */

/* a zigzag varint (log/varint.read_varint's encoding) at *pos; -1 at the end or past 10 bytes */
static inline int raw_varint(const unsigned char *d, Py_ssize_t n, Py_ssize_t *pos, int64_t *out)
{
    uint64_t raw = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*pos >= n)
            return -1;
        unsigned b = d[(*pos)++];
        raw |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
            return 0;
        }
    }
    return -1;
}

static int in_i64(i128 v) { return v >= (i128)INT64_MIN && v <= (i128)INT64_MAX; }

/* The record lines of `count` records in d[0:n] appended to b: 1 done (first/last offsets set), 0 not
 * plain (b may hold part of the lines: the caller drops them), -1 a Python error. */
static int raw_lines(sbuf *b, const unsigned char *d, Py_ssize_t n, long long count, long long base_offset,
                     long long base_ts, int log_append, long long lat_ts, long long base_seq, const char *ts_name,
                     Py_ssize_t ts_len, int printing, int64_t *first, int64_t *last)
{
    char hk[256]; /* a record's header keys joined by ',' (ASCII, short: anything else goes the slow way) */
    Py_ssize_t pos = 0;
    int64_t first_delta = 0;
    if (count <= 0)
        return 0;
    for (long long i = 0; i < count; i++) {
        int64_t length, ts_delta, off_delta, klen, vlen, hcount;
        if (raw_varint(d, n, &pos, &length) < 0 || length < 0 || length > n - pos)
            return 0;
        const Py_ssize_t end = pos + (Py_ssize_t)length;
        pos += 1; /* attributes: unused in v2 records */
        if (pos > end || raw_varint(d, end, &pos, &ts_delta) < 0 || raw_varint(d, end, &pos, &off_delta) < 0 ||
            raw_varint(d, end, &pos, &klen) < 0)
            return 0;
        if (i == 0)
            first_delta = off_delta;
        else if (off_delta != first_delta + i)
            return 0; /* the continuity report needs each offset: the slow path */
        const unsigned char *key = d + pos;
        if (klen < -1 || (klen > 0 && klen > end - pos))
            return 0;
        if (klen > 0)
            pos += (Py_ssize_t)klen;
        if (raw_varint(d, end, &pos, &vlen) < 0 || vlen < -1 || (vlen > 0 && vlen > end - pos))
            return 0;
        const unsigned char *value = d + pos;
        if (vlen > 0)
            pos += (Py_ssize_t)vlen;
        if (raw_varint(d, end, &pos, &hcount) < 0 || hcount < 0)
            return 0;
        size_t hn = 0;
        for (int64_t h = 0; h < hcount; h++) {
            int64_t hklen, hvlen;
            if (raw_varint(d, end, &pos, &hklen) < 0 || hklen < 0 || hklen > end - pos ||
                hn + (size_t)hklen + 1 > sizeof hk || !is_ascii((const char *)d + pos, (Py_ssize_t)hklen))
                return 0;
            if (h)
                hk[hn++] = ',';
            memcpy(hk + hn, d + pos, (size_t)hklen);
            hn += (size_t)hklen;
            pos += (Py_ssize_t)hklen;
            if (raw_varint(d, end, &pos, &hvlen) < 0 || hvlen < -1 || (hvlen > 0 && hvlen > end - pos))
                return 0;
            if (hvlen > 0)
                pos += (Py_ssize_t)hvlen;
        }
        if (pos != end)
            return 0;
        const i128 offset = (i128)base_offset + off_delta;
        const i128 ts = log_append ? (i128)lat_ts : (i128)base_ts + ts_delta;
        i128 seq = -1;
        if (base_seq != -1)
            seq = (i128)base_seq <= (i128)INT32_MAX - off_delta ? (i128)base_seq + off_delta
                                                               : (i128)off_delta - ((i128)INT32_MAX - base_seq) - 1;
        if (!in_i64(offset) || !in_i64(ts) || !in_i64(seq))
            return 0;
        if (printing && ((klen > 0 && !is_ascii((const char *)key, (Py_ssize_t)klen)) ||
                         (vlen > 0 && !is_ascii((const char *)value, (Py_ssize_t)vlen))))
            return 0;
        if (sb_lit(b, "| offset: ") < 0 || sb_ll(b, (long long)offset) < 0 || sb_lit(b, " ") < 0 ||
            sb_put(b, ts_name, (size_t)ts_len) < 0 || sb_lit(b, ": ") < 0 || sb_ll(b, (long long)ts) < 0 ||
            sb_lit(b, " keySize: ") < 0 || sb_ll(b, (long long)klen) < 0 || sb_lit(b, " valueSize: ") < 0 ||
            sb_ll(b, (long long)vlen) < 0 || sb_lit(b, " sequence: ") < 0 || sb_ll(b, (long long)seq) < 0 ||
            sb_lit(b, " headerKeys: [") < 0 || sb_put(b, hk, hn) < 0 || sb_lit(b, "]") < 0)
            return -1;
        if (printing) {
            if (klen >= 0 && (sb_lit(b, " key: ") < 0 || sb_put(b, (const char *)key, (size_t)klen) < 0))
                return -1;
            if (vlen >= 0 && (sb_lit(b, " payload: ") < 0 || sb_put(b, (const char *)value, (size_t)vlen) < 0))
                return -1;
        }
        if (sb_lit(b, "\n") < 0)
            return -1;
    }
    if (!in_i64((i128)base_offset + first_delta + count - 1))
        return 0;
    *first = base_offset + first_delta;
    *last = base_offset + first_delta + count - 1;
    return 1;
}

/* v2_raw_record_lines(data, count, base_offset, base_ts, log_append_ts or None, base_sequence, ts_name,
 *                     printing) -> (lines, first offset, last offset) or None */
static PyObject *py_v2_raw_record_lines(PyObject *self, PyObject *args)
{
    Py_buffer buf;
    long long count, base_offset, base_ts, base_seq;
    PyObject *lat;
    const char *ts_name;
    Py_ssize_t ts_len;
    int printing;
    if (!PyArg_ParseTuple(args, "y*LLLOLy#p", &buf, &count, &base_offset, &base_ts, &lat, &base_seq, &ts_name,
                          &ts_len, &printing))
        return NULL;
    long long lat_ts = 0;
    const int log_append = lat != Py_None;
    if (log_append) {
        int overflow;
        lat_ts = PyLong_AsLongLongAndOverflow(lat, &overflow);
        if ((lat_ts == -1 && PyErr_Occurred()) || overflow) {
            PyErr_Clear();
            PyBuffer_Release(&buf);
            Py_RETURN_NONE;
        }
    }
    static size_t per_record = 128; /* as v2_record_lines: sized from the last batch */
    sbuf b;
    if (count <= 0 || count > buf.len) { /* a record takes bytes: a larger count is damage, for the slow path */
        PyBuffer_Release(&buf);
        Py_RETURN_NONE;
    }
    if (sb_init(&b, (size_t)count * per_record + 256) < 0) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    int64_t first, last;
    int r = raw_lines(&b, buf.buf, buf.len, count, base_offset, base_ts, log_append, lat_ts, base_seq, ts_name,
                      ts_len, printing, &first, &last);
    PyBuffer_Release(&buf);
    if (r <= 0) {
        Py_XDECREF(b.o);
        if (r < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    per_record = b.n / (size_t)count + b.n / (size_t)count / 8 + 1;
    PyObject *lines = sb_finish(&b);
    if (lines == NULL)
        return NULL;
    return Py_BuildValue("NLL", lines, (long long)first, (long long)last);
}

/* ---------------------------------------------------------------------------------------------
 * deep_lines: --deep-iteration / --print-data-log over a run of plain uncompressed v2 batches
 *
 * The batch line and the record lines of each batch, as LogDumper._dump_batches_text writes them,
 * for as long as batches are plain: uncompressed v2 data batches (not control) whose records
 * v2_raw_record_lines prints and whose first offset follows the last one printed (`last_offset`, -1
 * for none; with `strict` a first batch after -1 must start at 0, as 4.3's continuity check wants).
 * It stops before any other entry and leaves it to the Python loop (compressed, control, legacy,
 * damaged, a gap in the offsets), which then calls it again after that entry.  Per-batch Python was
 * most of deep mode's time on logs of small uncompressed batches.
 *
 * deep_lines(buf, start, end, max_out, max_in, printing, last_offset, strict)
 *   -> (lines, pos, batches, records, first offset or -1, last offset)
 * ------------------------------------------------------------------------------------------- */

static PyObject *py_deep_lines(PyObject *self, PyObject *args)
{
    Py_buffer b;
    Py_ssize_t start, end, max_out, max_in;
    int printing, strict;
    long long last_offset;
    if (!PyArg_ParseTuple(args, "y*nnnnpLp", &b, &start, &end, &max_out, &max_in, &printing, &last_offset,
                          &strict))
        return NULL;
    if (start < 0 || end > b.len || max_out < 0) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_ValueError, "deep_lines: start/end outside the buffer");
        return NULL;
    }
    const unsigned char *d = b.buf;
    sbuf o;
    Py_ssize_t pos = start, batches = 0;
    long long records = 0, first_offset = -1;
    Py_ssize_t stop_in = max_in > PY_SSIZE_T_MAX - start ? PY_SSIZE_T_MAX : start + max_in;
    if (sb_init(&o, (size_t)max_out + 65536) < 0) {
        PyBuffer_Release(&b);
        return NULL;
    }
    while ((Py_ssize_t)o.n < max_out && pos < stop_in) {
        if (pos + 17 >= end)
            break;
        int64_t offset = be64(d + pos);
        int32_t size = be32(d + pos + 8);
        if (size < 14 || pos > end - 12 - (Py_ssize_t)size)
            break;
        Py_ssize_t total = (Py_ssize_t)size + 12;
        const unsigned char *p = d + pos;
        if (p[16] != 2 || total < 61 || !v2_plain_header(p, offset))
            break;
        int attrs = (int16_t)((p[21] << 8) | p[22]);
        if ((attrs & 7) != 0 || (attrs & 0x20)) /* compressed or control: the Python loop */
            break;
        long long count = be32(p + 57);
        const int log_append = (attrs & 0x08) != 0;
        const size_t mark = o.n;
        if (v2_batch_line(&o, p, offset, total, pos, 2) != 0)
            goto fail;
        int64_t first, last;
        int r = raw_lines(&o, p + 61, total - 61, count, offset, be64(p + 27), log_append, be64(p + 35),
                          be32(p + 53), log_append ? "LogAppendTime" : "CreateTime", log_append ? 13 : 10,
                          printing, &first, &last);
        if (r < 0)
            goto fail;
        if (r == 0 || (last_offset == -1 ? strict && first != 0 : first != last_offset + 1)) {
            o.n = mark; /* not plain, or a gap: the Python loop prints and reports it */
            break;
        }
        if (first_offset == -1)
            first_offset = first;
        last_offset = last;
        records += count;
        pos += total;
        batches++;
    }
    PyBuffer_Release(&b);
    PyObject *lines = sb_finish(&o);
    if (lines == NULL)
        return NULL;
    return Py_BuildValue("NnnLLL", lines, pos, batches, records, first_offset, last_offset);
fail:
    Py_XDECREF(o.o);
    PyBuffer_Release(&b);
    return NULL;
}

PyMethodDef dumplog_lines_methods[] = {
    {"v2_record_lines", py_v2_record_lines, METH_VARARGS, "dump-log's record lines of v2 data records."},
    {"shallow_lines", py_shallow_lines, METH_VARARGS, "dump-log's batch lines of a run of entries, CRC-checked."},
    {"deep_lines", py_deep_lines, METH_VARARGS, "dump-log's deep lines over a run of plain uncompressed v2 batches."},
    {"v2_raw_record_lines", py_v2_raw_record_lines, METH_VARARGS,
     "The record lines straight from a batch's record bytes, or None where the reference path must decode."},
    {NULL, NULL, 0, NULL},
};
