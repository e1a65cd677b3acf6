/* What the units of kafkatool._speedups share: big-endian field access, the CRC-32C every v2 walk
 * checks batches with, and each unit's functions for module.c to add.
 *
 * The compiled core is one extension module built from one C unit per Python unit it accelerates
 * (setup.py lists them); each unit's opening comment names the Python code it mirrors, which stays
 * the reference and the fallback.  Varint readers are deliberately not shared: each mirrors the
 * exact limits and errors of the Python reader beside it (log/varint.read_varint, keys._varints,
 * the offsets replay's 32-bit fields), and those differ.
 *
 * Rules kept in every unit: every read of the input is checked against its end; positions are kept in
 * 128-bit integers where Python's unbounded ints could grow past 64 bits; every error path releases
 * what it holds.  Names shared between units are hidden from the extension's dynamic symbol table.
 */
#ifndef KAFKATOOL_CORE_H
#define KAFKATOOL_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef __int128 i128;

#if defined(__GNUC__) || defined(__clang__)
#define KT_HIDDEN __attribute__((visibility("hidden")))
#else
#define KT_HIDDEN
#endif

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

/* the low n bytes of v, big-endian, at o */
static inline void put_be(unsigned char *o, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        o[i] = (unsigned char)v;
        v >>= 8;
    }
}

/* p[0:n] is ASCII (such text decodes alike as UTF-8 and as Java's modified rules) */
static inline int is_ascii(const char *p, Py_ssize_t n)
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

/* crc32c.c: CRC-32C of p[0:n] as the crc32c package computes it; crc32c_init() once, first */
KT_HIDDEN void crc32c_init(void);
KT_HIDDEN uint32_t crc32c(const unsigned char *p, size_t n);

/* one-time tables of dumplog_lines.c (zlib's CRC32) and md5.c (MD5's constants) */
KT_HIDDEN void dumplog_lines_init(void);
KT_HIDDEN void md5_init(void);

/* each unit's module functions (a NULL-terminated table), added by module.c */
extern KT_HIDDEN PyMethodDef crc32c_methods[];
extern KT_HIDDEN PyMethodDef v2_walk_methods[];
extern KT_HIDDEN PyMethodDef default_records_methods[];
extern KT_HIDDEN PyMethodDef dumplog_lines_methods[];
extern KT_HIDDEN PyMethodDef offsets_log_methods[];
extern KT_HIDDEN PyMethodDef md5_methods[];
extern KT_HIDDEN PyMethodDef compact_scan_methods[];
extern KT_HIDDEN PyMethodDef compact_keys_methods[];
extern KT_HIDDEN PyMethodDef compact_offsetmap_methods[];
extern KT_HIDDEN PyMethodDef compact_cleaner_methods[];
extern KT_HIDDEN PyMethodDef heap_methods[];

#endif
