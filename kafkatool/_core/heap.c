/* glibc's heap thresholds, set once at start-up: kafkatool/heap.py's heap_policy. */
#include "core.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif

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

PyMethodDef heap_methods[] = {
    {"heap_policy", py_heap_policy, METH_VARARGS, "heap_policy(trim, top_pad, mmap_threshold): glibc's mallopt."},
    {NULL, NULL, 0, NULL},
};
