// Fuzzes EventDecoder with arbitrary bytes, as one event and as a batch, and checks the
// round trip: whatever decodes must encode again and decode to an equal value.
// Bad input must only ever throw a DecodeError; any crash or trap is a bug.
import CFuzzDriver
import Foundation
import SpoorCore
import SpoorSerializer

// libFuzzer calls the callback on one thread, one input at a time, so the decoder and
// encoder (which keep scratch memory between calls) can be shared by every call.
nonisolated(unsafe) let decoder = EventDecoder()
nonisolated(unsafe) let encoder = EventEncoder()

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
        if try decoder.decodeBatch(SharedContext.factor(bytes)) != events {
            fatalError("the shared context changed the batch of \(events.count) events")
        }
    } catch {
        fatalError("a re-encoded batch does not decode: \(error)")
    }
}

func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size)
    if let event = try? decoder.decode(input) {
        checkRoundTrip(event)
    }
    if let events = try? decoder.decodeBatch(input) {
        checkBatchRoundTrip(events)
    }
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
