// Fuzzes EventDecoder with arbitrary bytes, as one event and as a batch, and checks the
// round trip: whatever decodes must encode again and decode to an equal value.
// Bad input must only ever throw a DecodeError; any crash or trap is a bug.
import CFuzzDriver
import Foundation
import SpoorModel
@_spi(Testing) import SpoorWire

// libFuzzer calls the callback on one thread, one input at a time, so the decoder and
// encoder (which keep scratch memory between calls) can be shared by every call.
nonisolated(unsafe) let decoder = EventDecoder()
nonisolated(unsafe) let encoder = EventEncoder()
/// Decodes events that extend a context through the merged bytes only (the rule's definition), to check the
/// decoder's shortcut (a context decoded once per batch) against it.
nonisolated(unsafe) let merging: EventDecoder = {
    let decoder = EventDecoder()
    decoder.alwaysMergesBytes = true
    return decoder
}()

/// Traps when the decoder's shortcut and the merged bytes disagree on a batch: other events, or another error.
func checkContextShortcut(_ input: UnsafeRawBufferPointer) {
    let fast = Result { () throws(DecodeError) in try decoder.decodeBatch(input) }
    let reference = Result { () throws(DecodeError) in try merging.decodeBatch(input) }
    if fast != reference {
        fatalError("decoding over a context decoded once differs from merging bytes:\n  \(fast)\n  \(reference)")
    }
}

/// Re-encodes a decoded event and decodes it again; traps when the value changes.
func checkRoundTrip(_ event: Event) {
    let bytes: [UInt8]
    do {
        bytes = try encoder.encode(event)
    } catch {
        fatalError("a decoded event does not encode again: \(error) — \(event)")
    }
    do {
        let again = try decoder.decode(bytes)
        if again != event {
            fatalError("round trip changed the event:\n  decoded  \(event)\n  re-read  \(again)")
        }
    } catch {
        fatalError("a re-encoded event does not decode: \(error) — \(event)")
    }
}

/// Re-encodes a decoded batch as batch entries and decodes it again; traps when it changes.
func checkBatchRoundTrip(_ events: [Event]) {
    var bytes: [UInt8] = []
    for event in events {
        do {
            try encoder.appendBatchEntry(event, to: &bytes)
        } catch {
            fatalError("a decoded batch event does not encode again: \(error) — \(event)")
        }
    }
    do {
        let again = try decoder.decodeBatch(bytes)
        if again != events {
            fatalError("round trip changed the batch of \(events.count) events")
        }
        // Storing the shared context once must give back the same events.
        let factored = LegacySharedContext.factor(bytes)
        if try decoder.decodeBatch(factored) != events {
            fatalError("the shared context changed the batch of \(events.count) events")
        }
        factored.withUnsafeBytes { checkContextShortcut($0) }
    } catch {
        fatalError("a re-encoded batch does not decode: \(error)")
    }
}

func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size)
    if let event = try? decoder.decode(input) {
        checkRoundTrip(event)
    }
    checkContextShortcut(input)
    if let events = try? decoder.decodeBatch(input) {
        checkBatchRoundTrip(events)
    }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
