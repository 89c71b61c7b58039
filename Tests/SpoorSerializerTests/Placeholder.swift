import Testing
import SpoorCore
import SpoorSerializer

@Test func smoke() throws {
    let event = Event(name: "Buy", time: 1, trackID: 7, sequence: 3, distinctID: "d", anonymousID: "a",
                      lib: LibInfo(lib: "Linux", libVersion: "0.1", method: .code),
                      properties: ["s": "x", "i": -5, "d": 2.5, "b": true, "l": ["p", "q"], "t": .date(99)])
    let bytes = try EventEncoder().encode(event)
    let back = try EventDecoder().decode(bytes)
    #expect(back == event)
}
