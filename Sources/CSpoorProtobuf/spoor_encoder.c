/* Encoding: flat arrays in, protobuf-c structs built in reusable scratch,
 * protobuf bytes out. Compiled only where protobuf-c's headers are: see
 * spoor_generated.c. */
#if __has_include(<protobuf-c/protobuf-c.h>)
#include "spoor_shim.h"
#include "spoor/v1/event.pb-c.h"

#include <stdlib.h>
#include <string.h>

struct spoor_encoder {
    Spoor__V1__Event event;
    Spoor__V1__Lib lib;

    /* One entry, value and list header per property; pointer arrays for
     * protobuf-c's `repeated` fields. All grow and are kept. */
    Spoor__V1__Event__PropertiesEntry *entries;
    Spoor__V1__Event__PropertiesEntry **entry_ptrs;
    Spoor__V1__Value *values;
    Spoor__V1__StringList *lists;
    size_t prop_capacity;

    char **list_items;
    size_t list_capacity;
};

spoor_encoder *spoor_encoder_new(void) {
    return calloc(1, sizeof(spoor_encoder));
}

void spoor_encoder_free(spoor_encoder *encoder) {
    if (!encoder) return;
    free(encoder->entries);
    free(encoder->entry_ptrs);
    free(encoder->values);
    free(encoder->lists);
    free(encoder->list_items);
    free(encoder);
}

/* Grows `*array` to hold `needed` elements of `size` bytes; keeps it on failure. */
static int grow(void **array, size_t *capacity, size_t needed, size_t size) {
    if (needed <= *capacity) return 1;
    size_t wanted = *capacity ? *capacity : 16;
    while (wanted < needed) wanted *= 2;
    void *grown = realloc(*array, wanted * size);
    if (!grown) return 0;
    *array = grown;
    *capacity = wanted;
    return 1;
}

static int reserve_props(spoor_encoder *e, size_t count) {
    if (count <= e->prop_capacity) return 1;
    size_t cap = e->prop_capacity;
    size_t c1 = cap, c2 = cap, c3 = cap, c4 = cap;
    if (!grow((void **)&e->entries, &c1, count, sizeof(*e->entries))) return 0;
    if (!grow((void **)&e->entry_ptrs, &c2, count, sizeof(*e->entry_ptrs))) return 0;
    if (!grow((void **)&e->values, &c3, count, sizeof(*e->values))) return 0;
    if (!grow((void **)&e->lists, &c4, count, sizeof(*e->lists))) return 0;
    /* All four grew to the same doubling of the same capacity. */
    e->prop_capacity = c1;
    return 1;
}

/* protobuf-c's message structs take `char *`; it never writes through them. */
#define TEXT(in, offset) ((char *)((in)->text + (offset)))

size_t spoor_encoder_prepare(spoor_encoder *e, const spoor_event_in *in) {
    if (!spoor_encoder_build(e, in)) return 0;
    return spoor__v1__event__get_packed_size(&e->event);
}

/* Properties go on the wire in key order: the same event always encodes to the same bytes, and
 * consecutive events of a batch line up, which compresses far better than the random order Swift
 * dictionaries iterate in. Insertion sort: events carry a handful of properties. */
static int compare_keys(const void *a, const void *b) {
    return strcmp((*(Spoor__V1__Event__PropertiesEntry *const *)a)->key,
                  (*(Spoor__V1__Event__PropertiesEntry *const *)b)->key);
}

static void sort_entries(Spoor__V1__Event__PropertiesEntry **entries, size_t count) {
    if (count > 32) {
        qsort(entries, count, sizeof *entries, compare_keys);
        return;
    }
    for (size_t i = 1; i < count; i++) {
        Spoor__V1__Event__PropertiesEntry *entry = entries[i];
        size_t j = i;
        while (j > 0 && strcmp(entries[j - 1]->key, entry->key) > 0) {
            entries[j] = entries[j - 1];
            j--;
        }
        entries[j] = entry;
    }
}

int spoor_encoder_build(spoor_encoder *e, const spoor_event_in *in) {
    if (!reserve_props(e, in->prop_count)) return 0;

    size_t list_total = 0;
    for (size_t i = 0; i < in->prop_count; i++) {
        if (in->props[i].kind == SPOOR_KIND_LIST) list_total += in->props[i].list_count;
    }
    if (!grow((void **)&e->list_items, &e->list_capacity, list_total, sizeof(char *))) return 0;

    spoor__v1__lib__init(&e->lib);
    e->lib.lib = TEXT(in, in->lib);
    e->lib.lib_version = TEXT(in, in->lib_version);
    e->lib.method = (Spoor__V1__LibMethod)in->lib_method;
    e->lib.app_version = TEXT(in, in->app_version);

    spoor__v1__event__init(&e->event);
    Spoor__V1__Event *ev = &e->event;
    ev->event = TEXT(in, in->event);
    ev->type = (Spoor__V1__EventType)in->type;
    ev->time = in->time;
    ev->track_id = in->track_id;
    ev->sequence = in->sequence;
    ev->distinct_id = TEXT(in, in->distinct_id);
    ev->anonymous_id = TEXT(in, in->anonymous_id);
    ev->login_id = TEXT(in, in->login_id);
    ev->session_id = TEXT(in, in->session_id);
    ev->original_id = TEXT(in, in->original_id);
    ev->lib = &e->lib;

    size_t next_item = 0;
    for (size_t i = 0; i < in->prop_count; i++) {
        const spoor_prop_in *p = &in->props[i];
        Spoor__V1__Event__PropertiesEntry *entry = &e->entries[i];
        Spoor__V1__Value *value = &e->values[i];
        spoor__v1__event__properties_entry__init(entry);
        spoor__v1__value__init(value);
        entry->key = TEXT(in, p->key);
        entry->value = value;
        switch (p->kind) {
        case SPOOR_KIND_STRING:
            value->kind_case = SPOOR__V1__VALUE__KIND_STRING_VALUE;
            value->string_value = TEXT(in, p->str);
            break;
        case SPOOR_KIND_INT:
            value->kind_case = SPOOR__V1__VALUE__KIND_INT_VALUE;
            value->int_value = p->integer;
            break;
        case SPOOR_KIND_DOUBLE:
            value->kind_case = SPOOR__V1__VALUE__KIND_DOUBLE_VALUE;
            value->double_value = p->real;
            break;
        case SPOOR_KIND_BOOL:
            value->kind_case = SPOOR__V1__VALUE__KIND_BOOL_VALUE;
            value->bool_value = p->integer != 0;
            break;
        case SPOOR_KIND_DATE:
            value->kind_case = SPOOR__V1__VALUE__KIND_DATE_VALUE;
            value->date_value = p->integer;
            break;
        case SPOOR_KIND_LIST: {
            Spoor__V1__StringList *list = &e->lists[i];
            spoor__v1__string_list__init(list);
            list->n_values = p->list_count;
            list->values = e->list_items + next_item;
            for (uint32_t j = 0; j < p->list_count; j++) {
                e->list_items[next_item++] = TEXT(in, in->list_offsets[p->list_start + j]);
            }
            value->kind_case = SPOOR__V1__VALUE__KIND_LIST_VALUE;
            value->list_value = list;
            break;
        }
        default:
            return 0;
        }
        e->entry_ptrs[i] = entry;
    }
    sort_entries(e->entry_ptrs, in->prop_count);
    ev->n_properties = in->prop_count;
    ev->properties = in->prop_count ? e->entry_ptrs : NULL;
    return 1;
}

size_t spoor_encoder_pack(spoor_encoder *e, uint8_t *out) {
    return spoor__v1__event__pack(&e->event, out);
}

#endif
