/* CRC-32C (Castagnoli): the checksum of every v2 batch, and `crc32c` for Python callers.
 *
 * Mirrors log/crc.py's function (the crc32c package's, initial value 0) bit for bit.  The walks in
 * v2_walk.c, dumplog_lines.c and compact_cleaner.c call crc32c() once a batch, in C, with the GIL
 * released: that per-batch call from C is why it is here rather than a call into the package.
 * SSE4.2's crc32 instruction over three streams where the CPU has it, else slicing-by-8.
 */
#include "core.h"

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

/* CRC-32C of p[0:n], as the crc32c package computes it (initial value 0).
 *
 * Kept hand-written because of how it is called, measured by benchmarks/bench_hashes.py (best of 9,
 * three runs, on the shared 2-core machine at load 8-11, so +-50%):
 *   one call on 256 KiB:   crc32c package 25-28 GB/s, this routine 22-28 GB/s (the same: both SSE4.2,
 *                          three streams);
 *   a call per 1 KiB batch: the package from Python 2.1-3.2 GB/s; this routine inside the C walk
 *                          (verify_crcs) 8-11 GB/s; 4 KiB batches 3-10 against 7-14 GB/s.
 * The package has no C API (no capsule, no header), so a C walk could only call it back through
 * Python, a call and a memoryview a batch; Python code calls the package itself (log/crc.py). */
uint32_t crc32c(const unsigned char *p, size_t n)
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

void crc32c_init(void)
{
    crc_init();
    crc_zeros_tables(crc_long, CRC_LONG);
    crc_zeros_tables(crc_short, CRC_SHORT);
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

PyMethodDef crc32c_methods[] = {
    {"crc32c", py_crc32c, METH_O, "CRC-32C of a bytes-like object."},
    {NULL, NULL, 0, NULL},
};
