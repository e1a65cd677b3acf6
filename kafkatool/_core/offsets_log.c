/* The offline __consumer_offsets replay: ops/offsets_log.py's _PartitionReplay, compiled.
 *
 *   offsets_replay_run(...)   _PartitionReplay.batch over a run of plain offset-commit and group
 *                             metadata batches (as Kafka's GroupMetadataManager loads them).
 *   offset_commit_key(key), offset_commit_value(value)
 *                             the common key and value versions (ops/offsets_log's decoders).
 *   offset_commits(...)       _PartitionReplay.result's decoding of the latest commits.
 *
 * A busy group coordinator's partition holds millions of commits of a few thousand keys: the replay
 * is bound by one hash-table look-up a record, which is what this unit keeps out of Python.
 */
#include "core.h"

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

PyMethodDef offsets_log_methods[] = {
    {"offset_commit_key", py_offset_commit_key, METH_O, "A key v0/v1 as (group, topic, partition), v2 as the group."},
    {"offset_commit_value", py_offset_commit_value, METH_O, "An offset commit value v0-v4 as a tuple, or None."},
    {"offsets_replay_run", py_offsets_replay_run, METH_VARARGS, "_PartitionReplay.batch over a run of plain batches."},
    {"offset_commits", py_offset_commits, METH_VARARGS, "_PartitionReplay.result's decoding of the latest commits."},
    {NULL, NULL, 0, NULL},
};
