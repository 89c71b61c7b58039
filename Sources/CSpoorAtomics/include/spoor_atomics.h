#ifndef SPOOR_ATOMICS_H
#define SPOOR_ATOMICS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Atomic operations on a 64-bit word that several processes map (a shared file's first 8 bytes): Swift's own
/// atomics need storage Swift owns, and a plain load of memory another process writes is a data race.

/// Reads `*word` with acquire order: what its writer wrote before storing the value is visible after.
static inline uint64_t spoor_atomic_load_u64(const uint64_t *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// Stores `value` in `*word` with release order.
static inline void spoor_atomic_store_u64(uint64_t *word, uint64_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

/// Adds `delta` to `*word` with acquire-release order; returns the new value.
static inline uint64_t spoor_atomic_add_u64(uint64_t *word, uint64_t delta) {
    return __atomic_add_fetch(word, delta, __ATOMIC_ACQ_REL);
}

#ifdef __cplusplus
}
#endif

#endif
