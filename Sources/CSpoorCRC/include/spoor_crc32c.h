#ifndef SPOOR_CRC32C_H
#define SPOOR_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Extends `crc`, the CRC-32C of some bytes (0 for none), with `length` bytes at `data`:
/// through the CPU's CRC-32C instructions (SSE4.2 on x86_64, the CRC extension on arm64)
/// when it has them, else through tables. Both give the same result.
uint32_t spoor_crc32c_update(uint32_t crc, const void *data, size_t length);

/// The same, always through the slicing-by-8 tables.
uint32_t spoor_crc32c_update_portable(uint32_t crc, const void *data, size_t length);

/// The same, always through the CPU instructions; only call when `spoor_crc32c_hardware()` is 1.
uint32_t spoor_crc32c_update_hardware(uint32_t crc, const void *data, size_t length);

/// 1 when this CPU has CRC-32C instructions Spoor uses, else 0.
int spoor_crc32c_hardware(void);

#ifdef __cplusplus
}
#endif

#endif
