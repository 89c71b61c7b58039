/* Decoding untrusted bytes: a wire-format scan that enforces the limits and
 * says what is wrong and where, then protobuf-c's unpack into a bounded
 * arena, then a flat view for Swift. Compiled only where protobuf-c's
 * headers are: see spoor_generated.c. */
#if __has_include(<protobuf-c/protobuf-c.h>)
#include "spoor_shim.h"
#include "spoor/v1/event.pb-c.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Wire primitives --------------------------------------------------- */

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_SGROUP = 3, WIRE_EGROUP = 4, WIRE_I32 = 5 };

static int fail(spoor_decode_error *err, spoor_decode_status status, const char *field,
                size_t offset, uint64_t detail) {
    err->status = status;
    err->field = field;
    err->offset = offset;
    err->detail = detail;
    return 0;
}

/* Reads a varint at *pos; advances *pos. */
static int read_varint(const uint8_t *data, size_t len, size_t *pos, uint64_t *value,
                       const char *field, spoor_decode_error *err) {
    size_t start = *pos;
    uint64_t result = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (*pos >= len) return fail(err, SPOOR_DECODE_TRUNCATED, field, start, 0);
        uint8_t byte = data[(*pos)++];
        result |= (uint64_t)(byte & 0x7F) << (7 * i);
        if (!(byte & 0x80)) {
            /* The tenth byte may only carry the top bit of a 64-bit value. */
            if (i == 9 && byte > 1) return fail(err, SPOOR_DECODE_OVERLONG_VARINT, field, start, 0);
            *value = result;
            return 1;
        }
    }
    return fail(err, SPOOR_DECODE_OVERLONG_VARINT, field, start, 0);
}

/* Strict UTF-8: no overlong forms, no surrogates, nothing past U+10FFFF. */
static int utf8_valid(const uint8_t *s, size_t n, size_t *bad) {
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) { i++; continue; }
        size_t need;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) { need = 1; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { need = 2; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { need = 3; cp = c & 0x07; }
        else { *bad = i; return 0; }
        if (n - i <= need) { *bad = i; return 0; }
        for (size_t k = 1; k <= need; k++) {
            uint8_t cc = s[i + k];
            if ((cc & 0xC0) != 0x80) { *bad = i; return 0; }
            cp = (cp << 6) | (cc & 0x3F);
        }
        if ((need == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (need == 3 && (cp < 0x10000 || cp > 0x10FFFF))) { *bad = i; return 0; }
        i += need + 1;
    }
    return 1;
}

/* ---- The scan ---------------------------------------------------------- */

typedef enum { MSG_EVENT, MSG_LIB, MSG_ENTRY, MSG_VALUE, MSG_LIST } msg_kind;

typedef enum { F_STRING, F_VARINT, F_ENUM_TYPE, F_ENUM_METHOD, F_I64, F_DOUBLE, F_MESSAGE } field_kind;

typedef struct {
    uint32_t number;
    field_kind kind;
    msg_kind message;     /* for F_MESSAGE */
    const char *path;
} field_spec;

static const field_spec event_fields[] = {
    {1, F_STRING, 0, "event"},
    {2, F_ENUM_TYPE, 0, "type"},
    {3, F_VARINT, 0, "time"},
    {4, F_I64, 0, "track_id"},
    {5, F_VARINT, 0, "sequence"},
    {6, F_STRING, 0, "distinct_id"},
    {7, F_STRING, 0, "anonymous_id"},
    {8, F_STRING, 0, "login_id"},
    {9, F_MESSAGE, MSG_LIB, "lib"},
    {10, F_MESSAGE, MSG_ENTRY, "properties"},
    {11, F_STRING, 0, "session_id"},
    {12, F_STRING, 0, "original_id"},
    {13, F_VARINT, 0, "context"},
    {14, F_VARINT, 0, "time_offset"},
    {15, F_VARINT, 0, "sequence_offset"},
};
static const field_spec lib_fields[] = {
    {1, F_STRING, 0, "lib.lib"},
    {2, F_STRING, 0, "lib.lib_version"},
    {3, F_ENUM_METHOD, 0, "lib.method"},
    {4, F_STRING, 0, "lib.app_version"},
};
static const field_spec entry_fields[] = {
    {1, F_STRING, 0, "properties.key"},
    {2, F_MESSAGE, MSG_VALUE, "properties.value"},
};
static const field_spec value_fields[] = {
    {1, F_STRING, 0, "properties.value.string_value"},
    {2, F_VARINT, 0, "properties.value.int_value"},
    {3, F_DOUBLE, 0, "properties.value.double_value"},
    {4, F_VARINT, 0, "properties.value.bool_value"},
    {5, F_VARINT, 0, "properties.value.date_value"},
    {6, F_MESSAGE, MSG_LIST, "properties.value.list_value"},
};
static const field_spec list_fields[] = {
    {1, F_STRING, 0, "properties.value.list_value.values"},
};

static const char *const message_paths[] = {
    "event", "lib", "properties", "properties.value", "properties.value.list_value",
};

typedef struct {
    const uint8_t *data;
    const spoor_decode_limits *limits;
    spoor_decode_error *err;
    size_t properties;    /* entries seen so far in the event */
    /* The last `lib.method` on the wire, in whichever `lib` it came: see restore_lib_method. */
    int lib_method_seen;
    int32_t lib_method;
} scan_ctx;

static const field_spec *find_field(msg_kind kind, uint32_t number) {
    const field_spec *fields;
    size_t count;
    switch (kind) {
    case MSG_EVENT: fields = event_fields; count = sizeof event_fields / sizeof *fields; break;
    case MSG_LIB: fields = lib_fields; count = sizeof lib_fields / sizeof *fields; break;
    case MSG_ENTRY: fields = entry_fields; count = sizeof entry_fields / sizeof *fields; break;
    case MSG_VALUE: fields = value_fields; count = sizeof value_fields / sizeof *fields; break;
    default: fields = list_fields; count = sizeof list_fields / sizeof *fields; break;
    }
    for (size_t i = 0; i < count; i++) {
        if (fields[i].number == number) return &fields[i];
    }
    return NULL;
}

static int expected_wire(field_kind kind) {
    switch (kind) {
    case F_STRING: case F_MESSAGE: return WIRE_LEN;
    case F_I64: case F_DOUBLE: return WIRE_I64;
    default: return WIRE_VARINT;
    }
}

/* Scans the message occupying [begin, end) of ctx->data. */
static int scan_message(scan_ctx *ctx, msg_kind kind, size_t begin, size_t end) {
    const uint8_t *d = ctx->data;
    const spoor_decode_limits *lim = ctx->limits;
    spoor_decode_error *err = ctx->err;
    const char *here = message_paths[kind];
    size_t pos = begin;
    size_t list_items = 0;
    int value_set = 0;

    while (pos < end) {
        size_t tag_at = pos;
        uint64_t tag;
        if (!read_varint(d, end, &pos, &tag, here, err)) return 0;
        uint64_t number = tag >> 3;
        int wire = (int)(tag & 7);
        if (number == 0 || number > 536870911u || wire == WIRE_SGROUP || wire == WIRE_EGROUP || wire > WIRE_I32)
            return fail(err, SPOOR_DECODE_INVALID_TAG, here, tag_at, tag);

        const field_spec *f = find_field(kind, (uint32_t)number);
        const char *path = f ? f->path : here;
        if (f && wire != expected_wire(f->kind))
            return fail(err, SPOOR_DECODE_WRONG_WIRE_TYPE, path, tag_at, (uint64_t)wire);

        size_t value_at = pos;
        switch (wire) {
        case WIRE_VARINT: {
            uint64_t v;
            if (!read_varint(d, end, &pos, &v, path, err)) return 0;
            /* Enums are open (proto3): any int32 is kept, as Google's runtime does; only a
             * value no int32 encodes to is refused. Type 0 is refused after unpacking. */
            if (f && (f->kind == F_ENUM_TYPE || f->kind == F_ENUM_METHOD) &&
                ((int64_t)v < INT32_MIN || (int64_t)v > INT32_MAX))
                return fail(err, SPOOR_DECODE_INVALID_ENUM, path, value_at, v);
            if (f && f->kind == F_ENUM_METHOD) {
                ctx->lib_method_seen = 1;
                ctx->lib_method = (int32_t)(int64_t)v;
            }
            break;
        }
        case WIRE_I64: {
            if (end - pos < 8) return fail(err, SPOOR_DECODE_TRUNCATED, path, value_at, 8);
            if (f && f->kind == F_DOUBLE) {
                double v;
                memcpy(&v, d + pos, 8); /* protobuf is little-endian, as are our targets */
                if (!isfinite(v)) return fail(err, SPOOR_DECODE_NON_FINITE_DOUBLE, path, value_at, 0);
            }
            pos += 8;
            break;
        }
        case WIRE_I32:
            if (end - pos < 4) return fail(err, SPOOR_DECODE_TRUNCATED, path, value_at, 4);
            pos += 4;
            break;
        case WIRE_LEN: {
            uint64_t n;
            if (!read_varint(d, end, &pos, &n, path, err)) return 0;
            if (n > end - pos) return fail(err, SPOOR_DECODE_LENGTH_PAST_END, path, value_at, n);
            size_t body = pos;
            pos += (size_t)n;
            if (!f) break; /* an unknown field: skipped, its bounds checked */
            if (f->kind == F_STRING) {
                if (n > lim->max_string_bytes)
                    return fail(err, SPOOR_DECODE_STRING_TOO_LONG, path, value_at, n);
                size_t bad;
                if (!utf8_valid(d + body, (size_t)n, &bad))
                    return fail(err, SPOOR_DECODE_INVALID_UTF8, path, body + bad, 0);
                if (n && memchr(d + body, 0, (size_t)n))
                    return fail(err, SPOOR_DECODE_EMBEDDED_NUL, path,
                                (size_t)((const uint8_t *)memchr(d + body, 0, (size_t)n) - d), 0);
                if (kind == MSG_LIST && ++list_items > lim->max_list_length)
                    return fail(err, SPOOR_DECODE_LIST_TOO_LONG, path, tag_at, list_items);
            } else {
                if (f->message == MSG_ENTRY && ++ctx->properties > lim->max_properties)
                    return fail(err, SPOOR_DECODE_TOO_MANY_PROPERTIES, path, tag_at, ctx->properties);
                if (!scan_message(ctx, f->message, body, pos)) return 0;
            }
            break;
        }
        }
        if (kind == MSG_VALUE && f) value_set = 1;
        /* An entry's value field appearing at all counts; an empty Value is caught below. */
        if (kind == MSG_ENTRY && f && f->number == 2) value_set = 1;
    }
    if ((kind == MSG_VALUE || kind == MSG_ENTRY) && !value_set)
        return fail(err, SPOOR_DECODE_MISSING_VALUE, kind == MSG_VALUE ? "properties.value" : "properties",
                    begin, 0);
    return 1;
}

/* A message may hold `lib` more than once (a Batch event after its context, or any writer's
 * concatenation); protobuf merges the occurrences, and a proto3 scalar keeps the value of its last
 * occurrence on the wire. protobuf-c's merge instead takes `method` from the last `lib` whether or
 * not that one holds it, so a `lib` without a method would reset it to 0. The scan saw every
 * occurrence: put back what protobuf's rule gives. */
static void restore_lib_method(Spoor__V1__Event *ev, const scan_ctx *ctx) {
    if (ev->lib) ev->lib->method = (Spoor__V1__LibMethod)(ctx->lib_method_seen ? ctx->lib_method : 0);
}

/* ---- The bounded arena ------------------------------------------------- */

struct spoor_decoder {
    spoor_decode_limits limits;
    uint8_t *arena;
    size_t capacity;
    size_t used;
    size_t budget;      /* what this decode may use, <= capacity */
    int exhausted;
    ProtobufCAllocator allocator;
    /* After spoor_decode_context: the context and its property views, in this arena. */
    const Spoor__V1__Event *context;
    size_t context_len;
    spoor_prop_view *context_props;
};

static void *arena_alloc(void *opaque, size_t size) {
    spoor_decoder *dec = opaque;
    size_t aligned = (size + 15) & ~(size_t)15;
    if (aligned < size || aligned > dec->budget - dec->used) {
        dec->exhausted = 1;
        return NULL;
    }
    void *p = dec->arena + dec->used;
    dec->used += aligned;
    return p;
}

static void arena_free(void *opaque, void *pointer) {
    (void)opaque;
    (void)pointer; /* everything goes at once when the next decode resets the arena */
}

spoor_decoder *spoor_decoder_new(spoor_decode_limits limits) {
    spoor_decoder *dec = calloc(1, sizeof *dec);
    if (!dec) return NULL;
    dec->limits = limits;
    dec->allocator.alloc = arena_alloc;
    dec->allocator.free = arena_free;
    dec->allocator.allocator_data = dec;
    return dec;
}

void spoor_decoder_free(spoor_decoder *dec) {
    if (!dec) return;
    free(dec->arena);
    free(dec);
}

/* What decoding `len` bytes may need at most. The densest input (a property
 * holding an empty list, six wire bytes) becomes four structs, a pointer,
 * protobuf-c's scan bookkeeping and a view entry: under 96 bytes per wire byte. */
static size_t arena_budget(const spoor_decoder *dec, size_t len) {
    (void)dec;
    return 16384 + len * 96;
}

static int arena_reset(spoor_decoder *dec, size_t budget) {
    /* Give back a large arena that one big input left behind. */
    if (dec->capacity > ((size_t)16 << 20) && budget < dec->capacity / 4) {
        free(dec->arena);
        dec->arena = NULL;
        dec->capacity = 0;
    }
    if (budget > dec->capacity) {
        size_t cap = dec->capacity ? dec->capacity : 16384;
        while (cap < budget) cap *= 2;
        uint8_t *grown = realloc(dec->arena, cap);
        if (!grown) return 0;
        dec->arena = grown;
        dec->capacity = cap;
    }
    dec->used = 0;
    dec->budget = budget;
    dec->exhausted = 0;
    return 1;
}

/* ---- Decode ------------------------------------------------------------ */

static spoor_str_view view_of(const char *s) {
    spoor_str_view v = {s ? s : "", s ? strlen(s) : 0};
    return v;
}

/* Fills `props` (room for ev->n_properties) with views of the event's properties; 0 with `err` set when a
 * value is missing or a merged list is too long. */
static int fill_props(spoor_decoder *dec, const Spoor__V1__Event *ev, spoor_prop_view *props, spoor_decode_error *err) {
    for (size_t i = 0; i < ev->n_properties; i++) {
        const Spoor__V1__Event__PropertiesEntry *entry = ev->properties[i];
        spoor_prop_view *p = &props[i];
        memset(p, 0, sizeof *p);
        p->key = view_of(entry->key);
        const Spoor__V1__Value *v = entry->value;
        if (!v || v->kind_case == SPOOR__V1__VALUE__KIND__NOT_SET) return fail(err, SPOOR_DECODE_MISSING_VALUE, "properties.value", 0, i);
        p->kind = (uint32_t)v->kind_case;
        switch (v->kind_case) {
        case SPOOR__V1__VALUE__KIND_STRING_VALUE: p->str = view_of(v->string_value); break;
        case SPOOR__V1__VALUE__KIND_INT_VALUE: p->integer = v->int_value; break;
        case SPOOR__V1__VALUE__KIND_DOUBLE_VALUE: p->real = v->double_value; break;
        case SPOOR__V1__VALUE__KIND_BOOL_VALUE: p->integer = v->bool_value ? 1 : 0; break;
        case SPOOR__V1__VALUE__KIND_DATE_VALUE: p->integer = v->date_value; break;
        case SPOOR__V1__VALUE__KIND_LIST_VALUE: {
            const Spoor__V1__StringList *list = v->list_value;
            size_t n = list ? list->n_values : 0;
            /* protobuf merges a list split over several `list_value` fields, so the scan's
             * per-message count is checked again on the merged list. */
            if (n > dec->limits.max_list_length) return fail(err, SPOOR_DECODE_LIST_TOO_LONG, "properties.value.list_value.values", 0, n);
            spoor_str_view *items = NULL;
            if (n) {
                items = arena_alloc(dec, n * sizeof *items);
                if (!items) return fail(err, SPOOR_DECODE_OUT_OF_MEMORY, "properties.value.list_value", 0, n);
                for (size_t j = 0; j < n; j++) items[j] = view_of(list->values[j]);
            }
            p->list = items;
            p->list_count = n;
            break;
        }
        default:
            return fail(err, SPOOR_DECODE_MISSING_VALUE, "properties.value", 0, i);
        }
    }
    return 1;
}

/* The path every decode takes: checks [data, data+len) against the wire format and the limits, unpacks it
 * with protobuf-c into the arena (its budget for this event plus `extra` bytes) and restores what
 * protobuf-c's merge loses (restore_lib_method). NULL with `err` set when the bytes are refused or memory ran
 * out. */
static Spoor__V1__Event *scan_and_unpack(spoor_decoder *dec, const uint8_t *data, size_t len, size_t extra,
                                         spoor_decode_error *err) {
    if (len > dec->limits.max_event_bytes) {
        fail(err, SPOOR_DECODE_EVENT_TOO_LARGE, "event", 0, len);
        return NULL;
    }
    scan_ctx ctx = {data, &dec->limits, err, 0, 0, 0};
    if (!scan_message(&ctx, MSG_EVENT, 0, len)) return NULL;
    if (!arena_reset(dec, arena_budget(dec, len) + extra)) {
        fail(err, SPOOR_DECODE_OUT_OF_MEMORY, "event", 0, len);
        return NULL;
    }
    Spoor__V1__Event *ev = spoor__v1__event__unpack(&dec->allocator, len, data);
    if (!ev) {
        fail(err, dec->exhausted ? SPOOR_DECODE_OUT_OF_MEMORY : SPOOR_DECODE_UNPACK_FAILED, "event", 0, len);
        return NULL;
    }
    restore_lib_method(ev, &ctx);
    return ev;
}

spoor_decode_status spoor_decode_event(spoor_decoder *dec, const uint8_t *data, size_t len,
                                       spoor_event_view *view, spoor_decode_error *err) {
    memset(err, 0, sizeof *err);
    Spoor__V1__Event *ev = scan_and_unpack(dec, data, len, 0, err);
    if (!ev) return err->status;
    /* A proto3 event with no type field decodes as UNSPECIFIED. */
    if (ev->type == SPOOR__V1__EVENT_TYPE__EVENT_TYPE_UNSPECIFIED) {
        fail(err, SPOOR_DECODE_INVALID_ENUM, "type", 0, 0);
        return err->status;
    }

    spoor_prop_view *props = NULL;
    if (ev->n_properties) {
        props = arena_alloc(dec, ev->n_properties * sizeof *props);
        if (!props) {
            fail(err, SPOOR_DECODE_OUT_OF_MEMORY, "properties", 0, ev->n_properties);
            return err->status;
        }
    }
    if (!fill_props(dec, ev, props, err)) return err->status;

    memset(view, 0, sizeof *view);
    view->event = view_of(ev->event);
    view->type = (int32_t)ev->type;
    /* Batch rule step 2: the offsets, added with wrapping (unsigned) arithmetic. */
    view->time = (int64_t)((uint64_t)ev->time + (uint64_t)ev->time_offset);
    view->track_id = ev->track_id;
    view->sequence = ev->sequence + (uint64_t)ev->sequence_offset;
    view->context = ev->context;
    view->distinct_id = view_of(ev->distinct_id);
    view->anonymous_id = view_of(ev->anonymous_id);
    view->login_id = view_of(ev->login_id);
    view->session_id = view_of(ev->session_id);
    view->original_id = view_of(ev->original_id);
    if (ev->lib) {
        view->lib = view_of(ev->lib->lib);
        view->lib_version = view_of(ev->lib->lib_version);
        view->app_version = view_of(ev->lib->app_version);
        view->lib_method = (int32_t)ev->lib->method;
    } else {
        view->lib = view->lib_version = view->app_version = view_of("");
    }
    view->props = props;
    view->prop_count = ev->n_properties;
    return SPOOR_DECODE_OK;
}

spoor_decode_status spoor_batch_next(const uint8_t *data, size_t len, size_t offset,
                                     size_t *start, size_t *length, size_t *next,
                                     spoor_decode_error *err) {
    return spoor_batch_next_field(data, len, offset, 1, start, length, next, err);
}

spoor_decode_status spoor_batch_next_field(const uint8_t *data, size_t len, size_t offset, uint32_t field,
                                           size_t *start, size_t *length, size_t *next,
                                           spoor_decode_error *err) {
    const char *path = field == 2 ? "contexts" : "events";
    memset(err, 0, sizeof *err);
    size_t pos = offset;
    while (pos < len) {
        size_t tag_at = pos;
        uint64_t tag;
        if (!read_varint(data, len, &pos, &tag, path, err)) return err->status;
        uint64_t number = tag >> 3;
        int wire = (int)(tag & 7);
        if (number == 0 || number > 536870911u || wire == WIRE_SGROUP || wire == WIRE_EGROUP || wire > WIRE_I32) {
            fail(err, SPOOR_DECODE_INVALID_TAG, path, tag_at, tag);
            return err->status;
        }
        /* Both known Batch fields (events, contexts) are messages. */
        if ((number == 1 || number == 2) && wire != WIRE_LEN) {
            fail(err, SPOOR_DECODE_WRONG_WIRE_TYPE, number == 2 ? "contexts" : "events", tag_at, (uint64_t)wire);
            return err->status;
        }
        size_t value_at = pos;
        uint64_t n = 0;
        switch (wire) {
        case WIRE_VARINT:
            if (!read_varint(data, len, &pos, &n, "batch", err)) return err->status;
            continue;
        case WIRE_I64: n = 8; break;
        case WIRE_I32: n = 4; break;
        default:
            if (!read_varint(data, len, &pos, &n, path, err)) return err->status;
        }
        if (n > len - pos) {
            fail(err, wire == WIRE_LEN ? SPOOR_DECODE_LENGTH_PAST_END : SPOOR_DECODE_TRUNCATED,
                 path, value_at, n);
            return err->status;
        }
        if (number == field) {
            *start = pos;
            *length = (size_t)n;
            *next = pos + (size_t)n;
            return SPOOR_DECODE_OK;
        }
        pos += (size_t)n; /* another or an unknown Batch field */
    }
    *start = len;
    *length = 0;
    *next = len;
    return SPOOR_DECODE_OK;
}

/* ---- Events over a decoded context ------------------------------------- */

int spoor_decode_context(spoor_decoder *dec, const uint8_t *data, size_t len) {
    spoor_decode_error err;
    memset(&err, 0, sizeof err);
    dec->context = NULL;
    Spoor__V1__Event *context = scan_and_unpack(dec, data, len, 0, &err);
    if (!context) return 0;
    spoor_prop_view *props = NULL;
    if (context->n_properties) {
        props = arena_alloc(dec, context->n_properties * sizeof *props);
        if (!props) return 0;
    }
    if (!fill_props(dec, context, props, &err)) return 0;
    dec->context = context;
    dec->context_len = len;
    dec->context_props = props;
    return 1;
}

/* Whether merging the message in [data, data+len) over a context is a plain override: no
 * singular field, at the top level or in `lib`, holds its default (0, an empty string or message) and `lib`
 * comes at most once. Then parsing the context's bytes followed by the event's (the Batch rule) gives every
 * singular field the event's value where it has one and the context's elsewhere, and the properties of both,
 * the context's first: what spoor_decode_event_over builds without parsing the context again. `in_lib` is set
 * for the `lib` message, whose own fields are looked at but not followed: a field 9 there is unknown, and may
 * nest as deep as the input is long. Every read is bounds-checked here, so it may run before the scan; a
 * malformed message gets 0 (the merged bytes then report the error). */
static int overrides_plainly(const uint8_t *data, size_t len, int in_lib) {
    size_t pos = 0;
    int libs = 0;
    while (pos < len) {
        uint64_t key, value;
        if (!read_varint(data, len, &pos, &key, "", &(spoor_decode_error){0})) return 0;
        uint64_t number = key >> 3;
        int known_singular = number >= 1 && number <= 15 && number != 10;
        switch (key & 7) {
        case 0:
            if (!read_varint(data, len, &pos, &value, "", &(spoor_decode_error){0})) return 0;
            if (known_singular && value == 0) return 0;
            break;
        case 1: {
            if (len - pos < 8) return 0;
            uint64_t word;
            memcpy(&word, data + pos, 8);
            if (known_singular && word == 0) return 0;
            pos += 8;
            break;
        }
        case 5:
            if (len - pos < 4) return 0;
            pos += 4;
            break;
        case 2:
            if (!read_varint(data, len, &pos, &value, "", &(spoor_decode_error){0}) || value > len - pos) return 0;
            if (known_singular && value == 0) return 0;
            if (number == 9 && !in_lib) {
                if (++libs > 1 || !overrides_plainly(data + pos, (size_t)value, 1)) return 0;
            }
            pos += (size_t)value;
            break;
        default:
            return 0;
        }
    }
    return 1;
}

static const char *either(const char *own, const char *shared) {
    return own && own[0] ? own : (shared ? shared : "");
}

int spoor_decode_event_over(spoor_decoder *dec, const spoor_decoder *context_decoder,
                            const uint8_t *data, size_t len, spoor_event_view *view) {
    const Spoor__V1__Event *c = context_decoder->context;
    if (!c || len > dec->limits.max_event_bytes - context_decoder->context_len) return 0;
    spoor_decode_error err;
    memset(&err, 0, sizeof err);
    /* Bounds-checked on its own, so it may look before the scan: an event it refuses costs no unpacking. */
    if (!overrides_plainly(data, len, 0)) return 0;
    Spoor__V1__Event *ev = scan_and_unpack(dec, data, len, c->n_properties * sizeof(spoor_prop_view), &err);
    if (!ev) return 0;
    int32_t type = (int32_t)(ev->type ? ev->type : c->type);
    size_t count = c->n_properties + ev->n_properties;
    if (type == SPOOR__V1__EVENT_TYPE__EVENT_TYPE_UNSPECIFIED || count > dec->limits.max_properties) return 0;
    spoor_prop_view *props = NULL;
    if (count) {
        props = arena_alloc(dec, count * sizeof *props);
        if (!props) return 0;
        if (c->n_properties) memcpy(props, context_decoder->context_props, c->n_properties * sizeof *props);
        if (!fill_props(dec, ev, props + c->n_properties, &err)) return 0;
    }

    memset(view, 0, sizeof *view);
    view->event = view_of(either(ev->event, c->event));
    view->type = type;
    /* Batch rule step 2: the merged offsets, added with wrapping (unsigned) arithmetic. */
    uint64_t time = (uint64_t)(ev->time ? ev->time : c->time);
    view->time = (int64_t)(time + (uint64_t)(ev->time_offset ? ev->time_offset : c->time_offset));
    view->track_id = ev->track_id ? ev->track_id : c->track_id;
    uint64_t sequence = ev->sequence ? ev->sequence : c->sequence;
    view->sequence = sequence + (uint64_t)(ev->sequence_offset ? ev->sequence_offset : c->sequence_offset);
    view->context = ev->context ? ev->context : c->context;
    view->distinct_id = view_of(either(ev->distinct_id, c->distinct_id));
    view->anonymous_id = view_of(either(ev->anonymous_id, c->anonymous_id));
    view->login_id = view_of(either(ev->login_id, c->login_id));
    view->session_id = view_of(either(ev->session_id, c->session_id));
    view->original_id = view_of(either(ev->original_id, c->original_id));
    const Spoor__V1__Lib *own = ev->lib, *shared = c->lib;
    view->lib = view_of(either(own ? own->lib : NULL, shared ? shared->lib : NULL));
    view->lib_version = view_of(either(own ? own->lib_version : NULL, shared ? shared->lib_version : NULL));
    view->app_version = view_of(either(own ? own->app_version : NULL, shared ? shared->app_version : NULL));
    view->lib_method = (int32_t)(own && own->method ? own->method : (shared ? shared->method : 0));
    view->props = props;
    view->prop_count = count;
    return 1;
}

#endif
