/* The log cleaner's rebuild of a batch that loses records: ops/compact/cleaner.py's _rebuild.
 *
 * Kafka's Cleaner.buildRetainedRecordsInto re-encodes a batch with only its retained records;
 * rebuild_v2 does it for a plain v2 batch, encoding as log/writer.py's encode_v2_batch encodes what
 * Batch.records() decodes, the bytes copied rather than decoded to Python objects and back.
 */
#include "core.h"

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
    put_be(o + 8, (uint64_t)(total - 12), 4);
    put_be(o + 21, (uint64_t)(attributes & 0x10), 2); /* only the transactional flag survives */
    put_be(o + 27, (uint64_t)min_ts, 8);
    put_be(o + 35, (uint64_t)max_ts, 8);
    put_be(o + 57, (uint64_t)kept, 4);
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
    put_be(o + 17, crc32c(o + 21, (size_t)(total - 21)), 4);
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

PyMethodDef compact_cleaner_methods[] = {
    {"rebuild_v2", py_rebuild_v2, METH_VARARGS, "The cleaner's rebuild of a plain v2 batch that loses records."},
    {NULL, NULL, 0, NULL},
};
