/*
 * The C shim between Swift and the protobuf-c generated code.
 *
 * Swift never sees protobuf-c descriptors or its nested pointer arrays: it
 * hands the encoder flat arrays (offsets into one block of NUL-terminated
 * UTF-8 text) and gets bytes back; the decoder takes untrusted bytes, checks
 * them against the wire format and the limits first, unpacks them with
 * protobuf-c into a bounded arena, and hands back a flat view (spoor_views.h,
 * in the CSpoorViews target, which the Swift decoder fills too).
 */
#ifndef SPOOR_SHIM_H
#define SPOOR_SHIM_H

#include <stddef.h>
#include <stdint.h>

#include "spoor_views.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Encoding ---------------------------------------------------------- */

/* One property. `key` and `str` are offsets into the event's text block;
 * a list's items are `list_count` offsets starting at `list_start` in the
 * event's `list_offsets`. */
typedef struct spoor_prop_in {
    uint32_t key;
    uint32_t kind;
    int64_t integer;   /* int, date (ms) and bool (0/1) */
    double real;       /* double */
    uint32_t str;      /* string */
    uint32_t list_start;
    uint32_t list_count;
} spoor_prop_in;

/* One event. Every string field is an offset into `text`, where it is
 * NUL-terminated; offset 0 must hold an empty string (a lone NUL). */
typedef struct spoor_event_in {
    const char *text;
    const uint32_t *list_offsets;
    const spoor_prop_in *props;
    size_t prop_count;

    uint32_t event;
    uint32_t distinct_id;
    uint32_t anonymous_id;
    uint32_t login_id;
    uint32_t session_id;
    uint32_t original_id;
    uint32_t lib;
    uint32_t lib_version;
    uint32_t app_version;
    int32_t lib_method;
    int32_t type;
    int64_t time;
    uint64_t track_id;
    uint64_t sequence;
} spoor_event_in;

/* Reusable encoder state: the protobuf-c structs of one event, kept between
 * calls so that steady-state encoding allocates nothing. Not thread-safe. */
typedef struct spoor_encoder spoor_encoder;

spoor_encoder *spoor_encoder_new(void);
void spoor_encoder_free(spoor_encoder *encoder);

/* Builds the protobuf-c message for `event` and returns its packed size,
 * or 0 when memory for the scratch structs could not be had. `event` and
 * everything it points to must stay valid until `spoor_encoder_pack`. */
size_t spoor_encoder_prepare(spoor_encoder *encoder, const spoor_event_in *event);

/* Builds the protobuf-c message for `event` like `spoor_encoder_prepare`
 * but skips protobuf-c's size pass, which costs about 40% of an encoding:
 * returns 1, or 0 when memory for the scratch structs could not be had. The
 * caller packs into a buffer sized by an upper bound it computes itself. */
int spoor_encoder_build(spoor_encoder *encoder, const spoor_event_in *event);

/* Packs the prepared (or built) message into `out`, which holds at least the
 * size `spoor_encoder_prepare` returned; returns the bytes written. */
size_t spoor_encoder_pack(spoor_encoder *encoder, uint8_t *out);

/* ---- Decoding ---------------------------------------------------------- */

typedef struct spoor_decode_limits {
    size_t max_event_bytes;      /* an encoded event larger than this is refused */
    size_t max_properties;       /* properties in one event */
    size_t max_string_bytes;     /* any one string, in UTF-8 bytes */
    size_t max_list_length;      /* strings in one list */
} spoor_decode_limits;

typedef enum spoor_decode_status {
    SPOOR_DECODE_OK = 0,
    SPOOR_DECODE_TRUNCATED,          /* the input ends inside a field */
    SPOOR_DECODE_OVERLONG_VARINT,    /* a varint longer than 10 bytes */
    SPOOR_DECODE_LENGTH_PAST_END,    /* a length prefix reaches past the end */
    SPOOR_DECODE_WRONG_WIRE_TYPE,    /* a known field with another wire type */
    SPOOR_DECODE_INVALID_TAG,        /* field number 0, or a group wire type */
    SPOOR_DECODE_INVALID_UTF8,       /* a string that is not UTF-8 */
    SPOOR_DECODE_EMBEDDED_NUL,       /* a string holding U+0000 */
    SPOOR_DECODE_EVENT_TOO_LARGE,    /* over max_event_bytes */
    SPOOR_DECODE_STRING_TOO_LONG,    /* over max_string_bytes */
    SPOOR_DECODE_TOO_MANY_PROPERTIES,/* over max_properties */
    SPOOR_DECODE_LIST_TOO_LONG,      /* over max_list_length */
    SPOOR_DECODE_MISSING_VALUE,      /* a property with no value set */
    SPOOR_DECODE_NON_FINITE_DOUBLE,  /* NaN or an infinity */
    SPOOR_DECODE_INVALID_ENUM,       /* an event type or lib method out of range */
    SPOOR_DECODE_OUT_OF_MEMORY,      /* the bounded arena is exhausted */
    SPOOR_DECODE_UNPACK_FAILED,      /* protobuf-c refused what the scan passed */
} spoor_decode_status;

typedef struct spoor_decode_error {
    spoor_decode_status status;
    const char *field;   /* a static path such as "properties.value.double_value" */
    size_t offset;       /* byte offset of the offending tag or value in the input */
    uint64_t detail;     /* the length, count or value at fault, where there is one */
} spoor_decode_error;

/* A decoder owns a bounded arena that holds the last decoded view. */
typedef struct spoor_decoder spoor_decoder;

spoor_decoder *spoor_decoder_new(spoor_decode_limits limits);
void spoor_decoder_free(spoor_decoder *decoder);

/* Decodes one encoded `Event`. On success fills `view` (valid until the
 * next call on this decoder) and returns SPOOR_DECODE_OK; otherwise fills
 * `error` and returns its status. Never reads outside [data, data+len). */
spoor_decode_status spoor_decode_event(spoor_decoder *decoder,
                                       const uint8_t *data, size_t len,
                                       spoor_event_view *view,
                                       spoor_decode_error *error);

/* Decodes a `Batch.contexts` entry's bytes (an `Event` holding shared fields) into this decoder's arena, where it
 * stays for spoor_decode_event_over until the next call on this decoder. Returns 1, or 0 when the context is
 * not valid (the caller then merges bytes and decodes, which reports why). */
int spoor_decode_context(spoor_decoder *decoder, const uint8_t *data, size_t len);

/* Decodes an event that extends the context `context_decoder` holds, without parsing the context again: when
 * the merge is a plain override (see spoor_decoder.c), fills `view` exactly as spoor_decode_event does for the
 * context's bytes followed by the event's, and returns 1. Returns 0 for anything else (an invalid event, a
 * limit passed, defaults written out): the caller then merges the bytes and calls spoor_decode_event. */
int spoor_decode_event_over(spoor_decoder *decoder, const spoor_decoder *context_decoder,
                            const uint8_t *data, size_t len, spoor_event_view *view);

/* Finds the next `Batch.events` entry in [data, data+len): on success sets
 * `*start`/`*length` to the event bytes and `*next` past them. Unknown
 * Batch fields are skipped. Returns SPOOR_DECODE_OK, or an error when the
 * framing is broken; `*start` is `len` when no entry remains. */
spoor_decode_status spoor_batch_next(const uint8_t *data, size_t len, size_t offset,
                                     size_t *start, size_t *length, size_t *next,
                                     spoor_decode_error *error);

/* The same for the entries of Batch field `field` (1 events, 2 contexts); the
 * other fields are skipped after their bounds are checked. */
spoor_decode_status spoor_batch_next_field(const uint8_t *data, size_t len, size_t offset, uint32_t field,
                                           size_t *start, size_t *length, size_t *next,
                                           spoor_decode_error *error);

#ifdef __cplusplus
}
#endif

#endif
