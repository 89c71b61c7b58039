/* The reference event built and packed with protobuf-c only: the lower bound
 * for Spoor's encoder, which does the same through its shim after copying the
 * Swift strings. The values mirror ReferenceEvent.swift. */
#include "ProtobufCFloor.h"
#include "spoor/v1/event.pb-c.h"

enum { PROPERTY_COUNT = 5 };

/* Fills the structs and calls `pack` with them; `size_first` adds the
 * `get_packed_size` pass that a caller sizing its buffer needs. */
static size_t encode_reference(uint8_t *out, size_t capacity, int size_first) {
    Spoor__V1__Lib lib;
    spoor__v1__lib__init(&lib);
    lib.lib = "Linux";
    lib.lib_version = "0.1.0";
    lib.method = SPOOR__V1__LIB_METHOD__LIB_METHOD_CODE;
    lib.app_version = "2.3.4";

    Spoor__V1__Event__PropertiesEntry entries[PROPERTY_COUNT];
    Spoor__V1__Event__PropertiesEntry *entry_ptrs[PROPERTY_COUNT];
    Spoor__V1__Value values[PROPERTY_COUNT];
    static const char *const keys[PROPERTY_COUNT] = {"product", "quantity", "price", "gift", "currency"};
    for (int i = 0; i < PROPERTY_COUNT; i++) {
        spoor__v1__event__properties_entry__init(&entries[i]);
        spoor__v1__value__init(&values[i]);
        entries[i].key = (char *)keys[i];
        entries[i].value = &values[i];
        entry_ptrs[i] = &entries[i];
    }
    values[0].kind_case = SPOOR__V1__VALUE__KIND_STRING_VALUE;
    values[0].string_value = "green-tea-500g";
    values[1].kind_case = SPOOR__V1__VALUE__KIND_INT_VALUE;
    values[1].int_value = 2;
    values[2].kind_case = SPOOR__V1__VALUE__KIND_DOUBLE_VALUE;
    values[2].double_value = 12.75;
    values[3].kind_case = SPOOR__V1__VALUE__KIND_BOOL_VALUE;
    values[3].bool_value = 0;
    values[4].kind_case = SPOOR__V1__VALUE__KIND_STRING_VALUE;
    values[4].string_value = "EUR";

    Spoor__V1__Event event;
    spoor__v1__event__init(&event);
    event.event = "BuyProduct";
    event.type = SPOOR__V1__EVENT_TYPE__EVENT_TYPE_TRACK;
    event.time = 1763769600123;
    event.track_id = 0x9E3779B97F4A7C15u;
    event.sequence = 4711;
    event.distinct_id = "5D0C1B6E-0F7A-4C63-9A63-2B7B3F0E2C11";
    event.anonymous_id = "5D0C1B6E-0F7A-4C63-9A63-2B7B3F0E2C11";
    event.lib = &lib;
    event.n_properties = PROPERTY_COUNT;
    event.properties = entry_ptrs;

    if (size_first && spoor__v1__event__get_packed_size(&event) > capacity) return 0;
    return spoor__v1__event__pack(&event, out);
}

size_t floor_encode_reference(uint8_t *out, size_t capacity) {
    return encode_reference(out, capacity, 1);
}

size_t floor_pack_reference_unsized(uint8_t *out) {
    return encode_reference(out, 0, 0);
}
