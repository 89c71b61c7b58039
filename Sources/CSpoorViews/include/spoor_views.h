/*
 * What both event decoders fill and the Swift code reads: flat views of one decoded event, their strings
 * pointing at UTF-8 bytes (in the input, or in the protobuf-c decoder's arena), and the zero-byte count the
 * encoders use to find a string holding U+0000. Plain C, linking nothing: it builds for every platform,
 * including Apple's, where protobuf-c is absent and the Swift decoder fills these views alone.
 */
#ifndef SPOOR_VIEWS_H
#define SPOOR_VIEWS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Property value kinds; the numbers are the `Value.kind` oneof field numbers. */
enum {
    SPOOR_KIND_STRING = 1,
    SPOOR_KIND_INT = 2,
    SPOOR_KIND_DOUBLE = 3,
    SPOOR_KIND_BOOL = 4,
    SPOOR_KIND_DATE = 5,
    SPOOR_KIND_LIST = 6,
};

typedef struct spoor_str_view {
    const char *ptr;
    size_t len;
} spoor_str_view;

typedef struct spoor_prop_view {
    spoor_str_view key;
    uint32_t kind;
    int64_t integer;              /* int, date, bool */
    double real;                  /* double */
    spoor_str_view str;           /* string */
    const spoor_str_view *list;   /* list items */
    size_t list_count;
} spoor_prop_view;

typedef struct spoor_event_view {
    spoor_str_view event;
    int32_t type;
    int64_t time;
    uint64_t track_id;
    uint64_t sequence;
    spoor_str_view distinct_id;
    spoor_str_view anonymous_id;
    spoor_str_view login_id;
    spoor_str_view session_id;
    spoor_str_view original_id;
    spoor_str_view lib;
    spoor_str_view lib_version;
    spoor_str_view app_version;
    int32_t lib_method;
    const spoor_prop_view *props;
    size_t prop_count;
    uint32_t context;    /* Batch.contexts reference (1-based), 0 for none; time and sequence have their offsets added */
} spoor_event_view;

/* The number of zero bytes in `bytes[0 ..< count]`, sixteen at a time with
 * SSE2 or NEON: the encoders count the NULs of an event's strings to find
 * one holding U+0000. */
size_t spoor_count_zero_bytes(const uint8_t *bytes, size_t count);

#ifdef __cplusplus
}
#endif

#endif
