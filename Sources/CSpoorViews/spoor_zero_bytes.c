/* Counting zero bytes, sixteen at a time where the CPU has vector instructions. */
#include "spoor_views.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

size_t spoor_count_zero_bytes(const uint8_t *bytes, size_t count) {
    size_t zeros = 0;
    size_t i = 0;
#if defined(__SSE2__)
    /* Sixteen bytes a step: compare with zero, take one bit per byte, count the bits. */
    const __m128i zero = _mm_setzero_si128();
    for (; i + 16 <= count; i += 16) {
        __m128i block = _mm_loadu_si128((const __m128i *)(bytes + i));
        zeros += (size_t)__builtin_popcount((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(block, zero)));
    }
#elif defined(__aarch64__)
    /* Sixteen bytes a step (A64 NEON): each zero byte becomes 1, and the sixteen lanes are summed. */
    for (; i + 16 <= count; i += 16) {
        uint8x16_t block = vld1q_u8(bytes + i);
        zeros += vaddvq_u8(vandq_u8(vceqzq_u8(block), vdupq_n_u8(1)));
    }
#endif
    for (; i < count; i++) zeros += bytes[i] == 0;
    return zeros;
}
