// Fuzzes the two wire paths against each other (docs/wire-paths.md). Arbitrary bytes go to the Swift decoder and to
// protobuf-c, as one event, as a batch and as views, with and without the shortcuts over a shared context, with the
// default limits and with tight ones: every way must give the same events (byte for byte once encoded again), the
// same views or the same error. Whatever decodes must then encode to the same bytes on both paths.
// Any disagreement traps, and so does any crash.
import CFuzzDriver
import Foundation
import SpoorModel
@_spi(Testing) import SpoorWire

/// Limits small enough that random inputs pass them: every limit's error path is compared too.
let tightLimits = DecodeLimits(maxEventBytes: 300, maxProperties: 4, maxStringBytes: 16, maxListLength: 3)

/// A decoder of each path, each way: through the shortcuts over a shared context, and through the merged bytes.
func decoders(_ limits: DecodeLimits) -> [(name: String, decoder: EventDecoder)] {
    [WirePath.protobufC, .swift].flatMap { path in
        [true, false].map { shortcuts in
            let decoder = EventDecoder(limits: limits, path: path)
            decoder.alwaysMergesBytes = !shortcuts
            decoder.viewsThroughProtobufC = !shortcuts
            return ("\(path)\(shortcuts ? "" : " merging bytes")", decoder)
        }
    }
}

// libFuzzer calls the callback on one thread, one input at a time, so decoders and encoders (which keep scratch
// memory between calls) can be shared by every call.
nonisolated(unsafe) let byLimits = [decoders(DecodeLimits()), decoders(tightLimits)]
nonisolated(unsafe) let swiftEncoder = EventEncoder(path: .swift)
nonisolated(unsafe) let protobufCEncoder = EventEncoder(path: .protobufC)

/// An event as protobuf-c encodes it: what tells two decoded events apart, a double's sign included.
func bytes(_ event: Event) -> [UInt8] {
    do { return try protobufCEncoder.encode(event) } catch { fatalError("a decoded event does not encode: \(error) — \(event)") }
}

/// A view's every field as text, properties in wire order, doubles by their bits.
func text(_ view: EventView) -> String {
    func string(_ bytes: UnsafeRawBufferPointer) -> String { "\(Array(bytes))" }
    var fields = [view.name, view.distinctID, view.anonymousID, view.loginID, view.sessionID, view.lib, view.libVersion,
                  view.appVersion].map(string)
    fields.append("\(view.type.rawValue) \(view.libMethod.rawValue) \(view.time) \(view.trackID) \(view.sequence)")
    for index in 0..<view.propertyCount {
        let property = view.property(index)
        let value = switch property.kind {
        case .string: string(property.string)
        case .int, .date: "\(property.integer)"
        case .double: "\(property.double.bitPattern)"
        case .bool: "\(property.bool)"
        case .list: (0..<property.listCount).map { string(property.listItem($0)) }.joined(separator: ",")
        }
        fields.append("\(string(property.key)) \(property.kind) \(value)")
    }
    return fields.joined(separator: "|")
}

struct Outcome: Equatable {
    var single: Result<[UInt8], DecodeError>
    var batch: Result<[[UInt8]], DecodeError>
    var views: Result<[String], DecodeError>
}

func outcome(_ input: UnsafeRawBufferPointer, _ decoder: EventDecoder) -> (Outcome, [Event]) {
    let single = Result { () throws(DecodeError) in try decoder.decode(input) }
    let batch = Result { () throws(DecodeError) in try decoder.decodeBatch(input) }
    let views = Result { () throws(DecodeError) in
        var all: [String] = []
        try decoder.forEachEventView(inBatch: input) { all.append(text($0)) }
        return all
    }
    let events = ((try? single.get()).map { [$0] } ?? []) + ((try? batch.get()) ?? [])
    return (Outcome(single: single.map(bytes), batch: batch.map { $0.map(bytes) }, views: views), events)
}

/// Traps unless both encoders write `event` alike in every form.
func checkEncoders(_ event: Event) {
    func all(_ encoder: EventEncoder) -> Result<[[UInt8]], EncodeError> {
        Result { () throws(EncodeError) in
            var entry: [UInt8] = [], context: [UInt8] = []
            try encoder.appendBatchEntry(event, suffix: [0x62, 0x01, 0x78], to: &entry)
            try encoder.appendContextEntry(event, suffix: [], to: &context)
            return [try encoder.encode(event), entry, context]
        }
    }
    let swift = all(swiftEncoder), protobufC = all(protobufCEncoder)
    if swift != protobufC { fatalError("the encoders differ on \(event):\n  swift      \(swift)\n  protobuf-c \(protobufC)") }
}

func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size)
    for decoders in byLimits {
        let (reference, events) = outcome(input, decoders[0].decoder)
        for (name, decoder) in decoders.dropFirst() {
            let (other, _) = outcome(input, decoder)
            if other != reference {
                fatalError("\(name) differs from \(decoders[0].name):\n  \(other)\n  \(reference)")
            }
        }
        events.forEach(checkEncoders)
    }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
