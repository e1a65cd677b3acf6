/* The log cleaner's key decoder: ops/compact/keys.py's _decode_key_columns_round, steps 2 and 3.
 *
 *   walk_record_starts(buf, spans)     each batch's record starts, from one record's length to the next.
 *   key_fields(buf, spans, starts)     every record's offset, key span and null flags, checked as the
 *                                      numpy step checks them.
 *
 * The cleaner reads every key of the dirty section (Kafka's Cleaner.buildOffsetMap); record by
 * record in Python it was most of a compaction's time.
 */
#include "core.h"

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

PyMethodDef compact_keys_methods[] = {
    {"walk_record_starts", py_walk_record_starts, METH_VARARGS, "The cleaner's walk from record length to record."},
    {"key_fields", py_key_fields, METH_VARARGS, "The cleaner's key decoder: every walked record's fields, checked."},
    {NULL, NULL, 0, NULL},
};
