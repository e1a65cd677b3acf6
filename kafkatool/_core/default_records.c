/* The records of a v2 batch: log/default_records.py's decode_v2_records, compiled.
 *
 * Same Records (kafkatool.log.record.Record, built here as the tuple subclass it is), same
 * CorruptRecordError messages, and the records decoded before an error on its `partial`, as
 * `py_decode_v2_records` (the reference) gives them.  Every deep read (dump-log --deep-iteration,
 * the cleaner's slow path, verify's record checks) decodes through it, a Python object a field.
 * `init` hands it the Python types it builds and raises (kafkatool.log.core calls it on import).
 */
#include "core.h"

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

PyMethodDef default_records_methods[] = {
    {"init", py_init, METH_VARARGS, "init(Record, CorruptRecordError, java_utf8)."},
    {"decode_v2_records", py_decode_v2_records, METH_VARARGS, "default_records.decode_v2_records, compiled."},
    {NULL, NULL, 0, NULL},
};
