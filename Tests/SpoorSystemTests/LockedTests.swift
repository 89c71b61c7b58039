import Foundation
import SpoorSystem
import Testing

@Suite struct LockedTests {
    /// Eight threads adding 20,000 each: with the lock the total is exact; a lock that let two bodies overlap
    /// would lose increments.
    @Test func bodiesNeverOverlap() async {
        let counter = Locked(0)
        let threads = 8, increments = 20_000
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let finished = Locked(0)
            for _ in 0..<threads {
                Thread.detachNewThread {
                    for _ in 0..<increments { counter.withLock { $0 += 1 } }
                    if finished.withLock({ $0 += 1; return $0 }) == threads { done.resume() }
                }
            }
        }
        #expect(counter.withLock { $0 } == threads * increments)
    }

    @Test func withLockIfAvailableGivesUpWhileTheLockIsHeld() {
        let value = Locked("free")
        // The lock is not recursive: inside its own body it is held, so the try fails at once instead of waiting.
        let inside = value.withLock { _ in value.withLockIfAvailable { $0 } }
        #expect(inside == nil)
        #expect(value.withLockIfAvailable { $0 } == "free")
        let serializing = Locked()
        #expect(serializing.withLock { serializing.withLockIfAvailable { 1 } } == nil)
        #expect(serializing.withLockIfAvailable { 1 } == 1)
    }

    @Test func aThrowingBodyReleasesTheLock() {
        struct Refused: Error {}
        let value = Locked(1)
        #expect(throws: Refused.self) { try value.withLock { (_: inout Int) throws(Refused) in throw Refused() } }
        #expect(value.withLockIfAvailable { $0 } == 1)
    }
}
