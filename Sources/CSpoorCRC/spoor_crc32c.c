/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): hardware where the CPU has it,
 * slicing-by-8 tables elsewhere. The instructions compute exactly the reflected CRC the
 * tables do, so the paths are interchangeable (tested equal on random inputs). */
#include "spoor_crc32c.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) || defined(_M_X64)
#define SPOOR_CRC_X86 1
#include <nmmintrin.h>
#elif defined(__aarch64__)
#define SPOOR_CRC_ARM 1
#include <arm_acle.h>
#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif
#endif

/* ---- Tables ---- */

static uint32_t tables[8][256];
static atomic_int tables_ready;

static void build_tables(void) {
    for (uint32_t byte = 0; byte < 256; byte++) {
        uint32_t crc = byte;
        for (int bit = 0; bit < 8; bit++) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
        tables[0][byte] = crc;
    }
    for (uint32_t byte = 0; byte < 256; byte++) {
        uint32_t crc = tables[0][byte];
        for (int k = 1; k < 8; k++) {
            crc = (crc >> 8) ^ tables[0][crc & 0xFF];
            tables[k][byte] = crc;
        }
    }
    /* Two threads may both build: they write the same values, and the release publishes them. */
    atomic_store_explicit(&tables_ready, 1, memory_order_release);
}

uint32_t spoor_crc32c_update_portable(uint32_t crc, const void *data, size_t length) {
    if (!atomic_load_explicit(&tables_ready, memory_order_acquire)) build_tables();
    const unsigned char *p = data;
    crc = ~crc;
    while (length >= 8) {
        uint32_t low, high;
        memcpy(&low, p, 4);
        memcpy(&high, p + 4, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        low = __builtin_bswap32(low);
        high = __builtin_bswap32(high);
#endif
        low ^= crc;
        crc = tables[7][low & 0xFF] ^ tables[6][(low >> 8) & 0xFF] ^ tables[5][(low >> 16) & 0xFF] ^
              tables[4][low >> 24] ^ tables[3][high & 0xFF] ^ tables[2][(high >> 8) & 0xFF] ^
              tables[1][(high >> 16) & 0xFF] ^ tables[0][high >> 24];
        p += 8;
        length -= 8;
    }
    while (length--) crc = (crc >> 8) ^ tables[0][(crc ^ *p++) & 0xFF];
    return ~crc;
}

/* ---- Hardware ---- */

#if SPOOR_CRC_X86
__attribute__((target("sse4.2")))
uint32_t spoor_crc32c_update_hardware(uint32_t crc, const void *data, size_t length) {
    const unsigned char *p = data;
    uint64_t c = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
        p += 8;
        length -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (length--) c32 = _mm_crc32_u8(c32, *p++);
    return ~c32;
}

static int detect(void) { return __builtin_cpu_supports("sse4.2") ? 1 : 0; }

#elif SPOOR_CRC_ARM
__attribute__((target("crc")))
uint32_t spoor_crc32c_update_hardware(uint32_t crc, const void *data, size_t length) {
    const unsigned char *p = data;
    uint32_t c = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __crc32cd(c, word);
        p += 8;
        length -= 8;
    }
    while (length--) c = __crc32cb(c, *p++);
    return ~c;
}

static int detect(void) {
#if defined(__APPLE__)
    return 1; /* every Apple arm64 CPU has the CRC extension */
#elif defined(__linux__)
    return (getauxval(AT_HWCAP) & HWCAP_CRC32) ? 1 : 0;
#else
    return 0;
#endif
}

#else
uint32_t spoor_crc32c_update_hardware(uint32_t crc, const void *data, size_t length) {
    return spoor_crc32c_update_portable(crc, data, length);
}

static int detect(void) { return 0; }
#endif

/* -1 until detected; detection is idempotent, so a race only repeats it. */
static atomic_int hardware = -1;

int spoor_crc32c_hardware(void) {
    int known = atomic_load_explicit(&hardware, memory_order_relaxed);
    if (known < 0) {
        known = detect();
        atomic_store_explicit(&hardware, known, memory_order_relaxed);
    }
    return known;
}

uint32_t spoor_crc32c_update(uint32_t crc, const void *data, size_t length) {
    if (length == 0) return crc;
    return spoor_crc32c_hardware() ? spoor_crc32c_update_hardware(crc, data, length)
                                   : spoor_crc32c_update_portable(crc, data, length);
}
