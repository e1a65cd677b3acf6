/* The log cleaner's batch header walk: ops/compact/scan.py's run of log/records.read_batch_header.
 *
 * The cleaner reads every batch header of the log (Kafka's Cleaner walks its segments batch by batch);
 * one Python call a header was about a quarter of a run, so batch_run reads a run of complete v2
 * headers into Batch objects in one call.
 */
#include "core.h"

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

PyMethodDef compact_scan_methods[] = {
    {"batch_run", py_batch_run, METH_VARARGS, "The cleaner's walk over a run of complete v2 batch headers."},
    {NULL, NULL, 0, NULL},
};
