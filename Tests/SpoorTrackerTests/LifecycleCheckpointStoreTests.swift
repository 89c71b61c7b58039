import Foundation
import Testing
import SpoorTracker
import SpoorTestSupport

@Suite("The checkpoint file's two slots")
struct LifecycleCheckpointStoreTests {
    private func checkpoint(_ wall: Int64) -> LifecycleCheckpoint {
        LifecycleCheckpoint(state: .started, sessionStart: LifecycleInstant(wall: 1, monotonic: 2), pages: [],
                            lastAlive: LifecycleInstant(wall: wall, monotonic: UInt64(wall)))
    }

    private func damage(_ url: URL, at offset: Int) throws {
        var bytes = try Data(contentsOf: url)
        bytes[offset] ^= 0xFF
        try bytes.write(to: url)
    }

    @Test func aTornNewestSlotFallsBackToThePreviousCheckpoint() throws {
        let directory = makeTemporaryDirectory()
        let store = LifecycleCheckpointStore(directory: directory)
        try store.save(checkpoint(10))   // sequence 1: slot 1
        try store.save(checkpoint(20))   // sequence 2: slot 0
        #expect(try store.load().get()?.lastAlive.wall == 20)
        try damage(store.url, at: 30)    // inside slot 0's JSON: its CRC no longer matches
        #expect(try store.load().get()?.lastAlive.wall == 10)
        try damage(store.url, at: LifecycleCheckpointStore.slotSize + 30)
        #expect(throws: CheckpointError.self) { try store.load().get() }
    }

    /// A new process reads the checkpoint it finds, then writes one of its own: the process that wrote the old one
    /// (an older Spoor's, whose file was moved into the new one's log) may write on, into its own file only.
    @Test func aNewStoreWritesAFileOfItsOwn() throws {
        let directory = makeTemporaryDirectory()
        let first = LifecycleCheckpointStore(directory: directory)
        for wall in 1...3 { try first.save(checkpoint(Int64(wall))) }
        let second = LifecycleCheckpointStore(directory: directory)   // a new process over the same directory
        #expect(try second.load().get()?.lastAlive.wall == 3)
        try second.save(checkpoint(4))
        #expect(try LifecycleCheckpointStore(directory: directory).load().get()?.lastAlive.wall == 4)
        for wall in 5...7 { try first.save(checkpoint(Int64(wall))) }
        #expect(try LifecycleCheckpointStore(directory: directory).load().get()?.lastAlive.wall == 4)
        try second.save(checkpoint(8))
        #expect(try LifecycleCheckpointStore(directory: directory).load().get()?.lastAlive.wall == 8)
    }

    /// Likewise the crash marker: a crash the old marker's process records later is not the new one's.
    @Test func aNewCrashMarkerIsAFileOfItsOwn() throws {
        let directory = makeTemporaryDirectory()
        let old = try #require(CrashMarker(directory: directory))
        old.record(reason: "SIGBUS", time: 1)
        #expect(CrashMarker.readPrevious(in: directory) == CrashRecord(time: 1, reason: "SIGBUS"))
        let new = try #require(CrashMarker(directory: directory))
        #expect(CrashMarker.readPrevious(in: directory) == nil)
        old.record(reason: "SIGSEGV", time: 2)
        #expect(CrashMarker.readPrevious(in: directory) == nil)
        new.record(reason: "SIGILL", time: 3)
        #expect(CrashMarker.readPrevious(in: directory) == CrashRecord(time: 3, reason: "SIGILL"))
    }
}
