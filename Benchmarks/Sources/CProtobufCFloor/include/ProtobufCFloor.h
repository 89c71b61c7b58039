/* The benchmarks' floor: the reference event encoded by protobuf-c from C, with
 * no Swift in the loop. SerializerBenchmarks checks at start-up that its bytes
 * decode to the same event as the Swift reference. */
#ifndef PROTOBUF_C_FLOOR_H
#define PROTOBUF_C_FLOOR_H

#include <stddef.h>
#include <stdint.h>

/* Fills the protobuf-c structs of the reference event (the strings are C
 * constants) and packs them into `out`, which holds `capacity` bytes.
 * Returns the bytes written, or 0 when `capacity` is too small. */
size_t floor_encode_reference(uint8_t *out, size_t capacity);

/* The same without the `get_packed_size` pass: packs straight into `out`,
 * which must hold the whole event (256 bytes do). Shows what that pass costs. */
size_t floor_pack_reference_unsized(uint8_t *out);

#endif
