// Writes the seed inputs of the FuzzEventDecoder and FuzzWirePaths corpora: valid encodings of
// varied events (made with EventEncoder) and hand-built malformed ones, one file per input;
// FuzzWirePaths also gets the shapes on which the Swift path and protobuf-c could part ways.
//
//   SWIFT_DETERMINISTIC_HASHING=1 swift run --package-path Fuzz FuzzSeeds [CORPUS_DIRECTORY]
//
// CORPUS_DIRECTORY defaults to Fuzz/Corpus. File names are fixed, so running it again
// rewrites the same seeds; inputs the fuzzer adds are named by their SHA-1 and stay.
// Deterministic hashing fixes the order of dictionary properties, so the bytes repeat too.
import Foundation
import SpoorModel
@_spi(Testing) import SpoorWire

/// A minimal protobuf writer for building malformed inputs by hand.
struct Wire {
    var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func tag(_ field: UInt64, _ wire: UInt64) { varint(field << 3 | wire) }

    mutating func field(_ field: UInt64, varint value: UInt64) {
        tag(field, 0)
        varint(value)
    }

    mutating func field(_ field: UInt64, bytes body: [UInt8]) {
        tag(field, 2)
        varint(UInt64(body.count))
        bytes += body
    }

    mutating func field(_ field: UInt64, string: String) { self.field(field, bytes: Array(string.utf8)) }

    mutating func field(_ field: UInt64, fixed64 value: UInt64) {
        tag(field, 1)
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    /// An event with only its type set: the smallest valid event.
    static func minimalEvent() -> Wire {
        var wire = Wire()
        wire.field(2, varint: 1)
        return wire
    }
}

/// One property entry (`properties` map entry) whose value message is `value`.
func entry(_ key: String, value: Wire) -> [UInt8] {
    var entry = Wire()
    entry.field(1, string: key)
    entry.field(2, bytes: value.bytes)
    return entry.bytes
}

let lib = LibInfo(lib: "Linux", libVersion: "0.1.0", method: .code, appVersion: "2.3.4")

let validEvents: [(String, Event)] = [
    ("minimal", Event(name: "", time: 0, distinctID: "", anonymousID: "", lib: LibInfo(lib: "", libVersion: "", method: .unspecified))),
    ("reference", Event(
        name: "BuyProduct", time: 1_763_769_600_000, trackID: 0x1234_5678_9ABC_DEF0, sequence: 42,
        distinctID: "user-7", anonymousID: "5D0C1B6E-0F7A-4C63-9A63-2B7B3F0E2C11", loginID: "user-7", lib: lib,
        properties: ["product": "tea", "count": 2, "price": 3.5, "gift": false, "currency": "EUR"],
        sessionID: "s-1"
    )),
    ("every-kind", Event(
        name: "$AppViewScreen", time: -1, trackID: .max, sequence: .max, distinctID: "d", anonymousID: "a",
        lib: LibInfo(lib: "iOS", libVersion: "1.0", method: .autoTrack),
        properties: [
            "s": "text", "i": .int(.min), "j": .int(.max), "d": .double(-0.0), "e": .double(.greatestFiniteMagnitude),
            "f": .double(.leastNonzeroMagnitude), "b": true, "t": .date(1_700_000_000_123), "l": ["a", "", "ü"],
            "empty-list": .list([]), "": "empty key",
        ]
    )),
    ("unicode", Event(
        name: "Käufe 🛒", time: 1, distinctID: "Ωmega", anonymousID: "日本語", lib: lib,
        properties: ["emoji": "👩‍👩‍👧", "rtl": "مرحبا", "combining": "e\u{301}"]
    )),
    ("signup", Event(
        name: "$SignUp", type: .trackSignup, time: 5, distinctID: "login-1", anonymousID: "anon-1", loginID: "login-1",
        lib: lib, originalID: "anon-1"
    )),
    ("long-list", Event(
        name: "Tags", time: 9, distinctID: "x", anonymousID: "x", lib: lib,
        properties: ["tags": .list((0..<40).map { "tag-\($0)" })]
    )),
    ("many-properties", Event(
        name: "Wide", time: 9, distinctID: "x", anonymousID: "x", lib: lib,
        properties: Dictionary(uniqueKeysWithValues: (0..<30).map { ("p\($0)", PropertyValue.int(Int64($0) * 1_000_003)) })
    )),
] + EventType.allCases.filter { $0 != .track && $0 != .trackSignup }.map { type in
    ("profile-\(type.name)", Event(
        name: "", type: type, time: 77, distinctID: "user", anonymousID: "anon", loginID: "user", lib: lib,
        properties: type == .profileDelete ? [:] : ["plan": "pro", "visits": 3]
    ))
}

var seeds: [(String, [UInt8])] = []
let encoder = EventEncoder()
for (name, event) in validEvents {
    seeds.append(("valid-\(name)", try encoder.encode(event)))
}

// A batch of three events, and the empty batch's neighbour: one entry holding an empty event.
var batch: [UInt8] = []
for (_, event) in validEvents.prefix(3) { try encoder.appendBatchEntry(event, to: &batch) }
seeds.append(("valid-batch-3", batch))

let reference = seeds[1].1

// Valid, but not as Spoor writes it: fields out of order, repeated, unknown.
do {
    var wire = Wire()
    wire.field(6, string: "late-distinct")
    wire.field(1, string: "Second")
    wire.field(2, varint: 2)
    wire.field(2, varint: 1) // the last value of a scalar field wins
    wire.field(99, varint: 7) // unknown fields are skipped
    wire.field(100, string: "unknown text")
    wire.tag(101, 5)
    wire.bytes += [1, 2, 3, 4]
    seeds.append(("valid-unordered-unknown-fields", wire.bytes))

    var dup = Wire.minimalEvent()
    var one = Wire()
    one.field(1, string: "first")
    var two = Wire()
    two.field(2, varint: 4) // zigzag 2
    dup.field(10, bytes: entry("k", value: one))
    dup.field(10, bytes: entry("k", value: two)) // a repeated map key: the last entry wins
    seeds.append(("valid-duplicate-key", dup.bytes))

    var twoLists = Wire.minimalEvent()
    var listA = Wire()
    listA.field(1, string: "a")
    var listB = Wire()
    listB.field(1, string: "b")
    var value = Wire()
    value.field(6, bytes: listA.bytes)
    value.field(6, bytes: listB.bytes) // an embedded message twice: protobuf merges them
    twoLists.field(10, bytes: entry("tags", value: value))
    seeds.append(("valid-list-in-two-parts", twoLists.bytes))

    var boolTwo = Wire.minimalEvent()
    var b = Wire()
    b.field(4, varint: 2) // any non-zero varint is true
    boolTwo.field(10, bytes: entry("flag", value: b))
    seeds.append(("valid-bool-two", boolTwo.bytes))
}

// Malformed inputs: each must throw a DecodeError.
seeds.append(("edge-empty", []))
seeds.append(("edge-truncated-half", Array(reference.prefix(reference.count / 2))))
seeds.append(("edge-truncated-last-byte", Array(reference.dropLast())))
do {
    var wire = Wire.minimalEvent()
    wire.field(1, varint: 5) // `event` is a string
    seeds.append(("edge-wrong-wire-type", wire.bytes))

    var overlong = Wire.minimalEvent()
    overlong.tag(3, 0)
    overlong.bytes += Array(repeating: 0xFF, count: 10) + [0x01]
    seeds.append(("edge-overlong-varint", overlong.bytes))

    var tenth = Wire.minimalEvent()
    tenth.tag(3, 0)
    tenth.bytes += Array(repeating: 0xFF, count: 9) + [0x02] // the tenth byte holds more than bit 63
    seeds.append(("edge-varint-over-64-bits", tenth.bytes))

    var pastEnd = Wire.minimalEvent()
    pastEnd.tag(1, 2)
    pastEnd.varint(5)
    pastEnd.bytes += Array("ab".utf8)
    seeds.append(("edge-length-past-end", pastEnd.bytes))

    var huge = Wire.minimalEvent()
    huge.tag(10, 2)
    huge.varint(.max)
    seeds.append(("edge-huge-length", huge.bytes))

    var badUTF8 = Wire.minimalEvent()
    badUTF8.field(1, bytes: [0x42, 0xC3, 0x28])
    seeds.append(("edge-invalid-utf8", badUTF8.bytes))

    var surrogate = Wire.minimalEvent()
    surrogate.field(6, bytes: [0xED, 0xA0, 0x80])
    seeds.append(("edge-utf8-surrogate", surrogate.bytes))

    var nul = Wire.minimalEvent()
    nul.field(7, bytes: [0x61, 0x00, 0x62])
    seeds.append(("edge-embedded-nul", nul.bytes))

    var nan = Wire.minimalEvent()
    var value = Wire()
    value.field(3, fixed64: Double.nan.bitPattern)
    nan.field(10, bytes: entry("x", value: value))
    seeds.append(("edge-nan", nan.bytes))

    var noValue = Wire.minimalEvent()
    var keyOnly = Wire()
    keyOnly.field(1, string: "lonely")
    noValue.field(10, bytes: keyOnly.bytes)
    seeds.append(("edge-missing-value", noValue.bytes))

    var emptyValue = Wire.minimalEvent()
    emptyValue.field(10, bytes: entry("empty", value: Wire()))
    seeds.append(("edge-empty-value", emptyValue.bytes))

    // Enums are open: any int32 is a type (99 is a newer SDK's), only a value past int32 is not.
    var futureType = Wire.minimalEvent()
    futureType.field(2, varint: 99)
    seeds.append(("valid-unknown-type", futureType.bytes))

    var badType = Wire()
    badType.field(2, varint: 1 << 40)
    seeds.append(("edge-invalid-type", badType.bytes))

    var noType = Wire()
    noType.field(1, string: "NoType")
    seeds.append(("edge-missing-type", noType.bytes))

    var badMethod = Wire.minimalEvent()
    var libWire = Wire()
    libWire.field(3, varint: 1 << 40)
    badMethod.field(9, bytes: libWire.bytes)
    seeds.append(("edge-invalid-method", badMethod.bytes))

    var group = Wire.minimalEvent()
    group.tag(5, 3)
    seeds.append(("edge-group-wire-type", group.bytes))

    var fieldZero = Wire.minimalEvent()
    fieldZero.field(0, varint: 1)
    seeds.append(("edge-field-zero", fieldZero.bytes))

    var truncatedFixed = Wire.minimalEvent()
    truncatedFixed.tag(4, 1)
    truncatedFixed.bytes += [1, 2, 3]
    seeds.append(("edge-truncated-fixed64", truncatedFixed.bytes))

    var badBatch = batch
    badBatch.removeLast(3)
    seeds.append(("edge-batch-truncated-entry", badBatch))

    var badEntry = Wire()
    badEntry.field(1, bytes: Wire.minimalEvent().bytes)
    badEntry.field(1, varint: 3) // a Batch entry with the wrong wire type
    seeds.append(("edge-batch-wrong-wire-type", badEntry.bytes))
}

// Where the two wire paths could part ways (docs/wire-paths.md): protobuf-c's reading of repeated fields, its
// five-byte tags and length prefixes, open enums, shared contexts and what differs between an event and its context.
var wirePathSeeds: [(String, [UInt8])] = []
do {
    var paddedTag = Wire()
    paddedTag.bytes = [0x90, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01] // type = 1 under a tag in six bytes
    wirePathSeeds.append(("tag-in-six-bytes", paddedTag.bytes))

    var paddedLength = Wire.minimalEvent()
    paddedLength.tag(1, 2)
    paddedLength.bytes += [0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 0x61] // "a" under a length in six bytes
    wirePathSeeds.append(("length-in-six-bytes", paddedLength.bytes))

    var libs = Wire.minimalEvent()
    var first = Wire()
    first.field(3, varint: 2)
    first.field(1, string: "iOS")
    var second = Wire()
    second.field(2, string: "2.0")
    libs.field(9, bytes: first.bytes)
    libs.field(9, bytes: second.bytes) // lib twice: merged field by field, the method kept
    wirePathSeeds.append(("lib-twice", libs.bytes))

    var values = Wire.minimalEvent()
    var number = Wire()
    number.field(2, varint: 10)
    var text = Wire()
    text.field(1, string: "x")
    var twoValues = Wire()
    twoValues.field(1, string: "k")
    twoValues.field(2, bytes: number.bytes)
    twoValues.field(2, bytes: text.bytes) // value twice: the last one whole
    values.field(10, bytes: twoValues.bytes)
    wirePathSeeds.append(("value-twice", values.bytes))

    var negative = Wire()
    negative.field(2, varint: UInt64(bitPattern: -5))
    var negativeLib = Wire()
    negativeLib.field(3, varint: UInt64(bitPattern: -1))
    negative.field(9, bytes: negativeLib.bytes)
    negative.field(13, varint: 1 << 32 | 1) // a context reference past 32 bits
    wirePathSeeds.append(("negative-enums-wide-reference", negative.bytes))

    // A batch with its shared context, then an event that overrides the context with defaults and one that refers
    // to a context the batch does not hold.
    let shared = LegacySharedContext.factor(batch)
    wirePathSeeds.append(("batch-shared-context", shared))
    var overriding = Wire()
    overriding.field(13, varint: 1)
    overriding.field(3, varint: 0)
    overriding.field(6, string: "")
    overriding.field(9, bytes: [])
    var withDefaults = Wire()
    withDefaults.bytes = shared
    withDefaults.field(1, bytes: overriding.bytes)
    var missing = Wire.minimalEvent()
    missing.field(13, varint: 2)
    withDefaults.field(1, bytes: missing.bytes)
    wirePathSeeds.append(("batch-context-overrides", withDefaults.bytes))

    var emptyLast = Wire()
    emptyLast.field(1, bytes: Wire.minimalEvent().bytes)
    emptyLast.bytes += [0x0A, 0x00] // an empty entry that ends the batch
    wirePathSeeds.append(("batch-empty-last-entry", emptyLast.bytes))
}

let corpus = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? "Fuzz/Corpus")
for (target, targetSeeds) in [("FuzzEventDecoder", seeds), ("FuzzWirePaths", seeds + wirePathSeeds)] {
    let directory = corpus.appendingPathComponent(target)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    for (name, bytes) in targetSeeds {
        try Data(bytes).write(to: directory.appendingPathComponent("seed-\(name)"))
    }
    print("wrote \(targetSeeds.count) seeds to \(directory.path)")
}
