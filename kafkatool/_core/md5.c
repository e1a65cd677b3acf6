/* MD5 of many key slices: the digests the log cleaner's offset map keys on (ops/compact/keys.py).
 *
 * Kafka's SkimpyOffsetMap stores each key's MD5 digest; kafkatool's OffsetMap does too, so the
 * cleaner hashes every key of a dirty segment.  md5_slices digests thousands of slices of one buffer
 * in one call (hashlib's bytes, byte for byte), eight short keys at a time in vector lanes.
 */
#include "core.h"
#include <math.h>

/* ---------------------------------------------------------------------------------------------
 * MD5 of many key slices (kafkatool.ops.compact: the offset map stores keys' MD5 digests)
 * ------------------------------------------------------------------------------------------- */

static uint32_t md5_k[64];
void md5_init(void)
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
 * always this short.  The steps are md5_block's (MD5_64_STEPS on vectors).
 *
 * Kept hand-written, measured by benchmarks/bench_hashes.py (100,000 keys in one buffer, best of 9, three
 * runs on the shared 2-core machine at load 8-11, so +-50%), in million keys a second:
 *   keys of 8/16/36 bytes:  these lanes 12-21; OpenSSL's libcrypto from C, a key a call: MD5() 3.7-10,
 *                           EVP_Digest 2-6; hashlib (OpenSSL from Python, the pure-Python path) 0.6-2.3;
 *   keys of 100 bytes:      md5() above 1.5-3.9; libcrypto MD5() 1.9-4.7, EVP_Digest 1.1-3.6 (on par).
 * Linking libcrypto would also need OpenSSL's headers at build time (libssl-dev), which a machine with
 * only Python and a C compiler lacks.  ISA-L's multi-buffer MD5 has no pip package (`isal` binds its
 * compression only). */
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

PyMethodDef md5_methods[] = {
    {"md5_slices", py_md5_slices, METH_VARARGS, "MD5 digests of many slices of one buffer, concatenated."},
    {NULL, NULL, 0, NULL},
};
