import SpoorCollectorCore
import SpoorSystem
import Testing

@Suite("Group commit: the batches of concurrent requests in one transaction, one group at a time", .timeLimit(.minutes(10)))
struct GroupCommitTests {
    /// A store's commit that records each group, answers by the ids it holds, and holds the first group until
    /// `release()`; `failing` ids make their whole group fail.
    final class Recorder: Sendable {
        private let state = Locked<(groups: [[String]], stored: Set<String>, gate: CheckedContinuation<Void, Never>?)>(([], [], nil))
        let entered: AsyncStream<Void>
        private let enteredContinuation: AsyncStream<Void>.Continuation
        let failing: Set<String>

        init(failing: Set<String> = []) {
            (entered, enteredContinuation) = AsyncStream.makeStream()
            self.failing = failing
        }

        func commit(_ batches: [BatchRecord]) async throws(StoreUnavailable) -> [InsertResult] {
            let first = state.withLock { state in
                state.groups.append(batches.map(\.batchID))
                return state.groups.count == 1
            }
            if first {
                await withCheckedContinuation { continuation in
                    state.withLock { $0.gate = continuation }
                    enteredContinuation.yield()
                }
            }
            if batches.contains(where: { failing.contains($0.batchID) }) { throw StoreUnavailable("refused") }
            return state.withLock { state in
                batches.map { state.stored.insert($0.batchID).inserted ? .stored : .duplicate }
            }
        }

        func release() { state.withLock { $0.gate }?.resume() }
        var groups: [[String]] { state.withLock { $0.groups } }
    }

    static func batch(_ id: String, events: Int = 10) -> BatchRecord {
        BatchRecord(batchID: id, receivedAt: 0, codec: "none", frame: [], eventCount: events, rows: .empty)
    }

    /// A group commit over `recorder` whose waiting count is reported on the stream returned with it.
    static func groupCommit(_ recorder: Recorder, limits: GroupCommit.Limits = .init()) -> (GroupCommit, AsyncStream<Int>) {
        let (waiting, continuation) = AsyncStream.makeStream(of: Int.self)
        let group = GroupCommit(store: "test", limits: limits, onWaiting: { continuation.yield($0) }) { batches throws(StoreUnavailable) in
            try await recorder.commit(batches)
        }
        return (group, waiting)
    }

    /// Waits until `count` batches wait behind the group being written.
    static func waitFor(_ count: Int, in waiting: AsyncStream<Int>) async {
        for await reported in waiting where reported == count { return }
    }

    @Test("batches that wait while a group commits form the next group; a batch id twice in it, or stored before, is a duplicate")
    func nextGroupAndDuplicates() async throws {
        let recorder = Recorder()
        let (group, waiting) = Self.groupCommit(recorder)
        async let first = group.insert(Self.batch("x"))
        for await _ in recorder.entered { break }
        async let y1 = group.insert(Self.batch("y"))
        async let y2 = group.insert(Self.batch("y"))
        async let x2 = group.insert(Self.batch("x"))
        await Self.waitFor(3, in: waiting)
        recorder.release()
        #expect(try await first == .stored)
        #expect(try await x2 == .duplicate)
        #expect(try await [y1, y2].sorted { $0 == .stored && $1 == .duplicate } == [.stored, .duplicate])
        let groups = recorder.groups
        #expect(groups.count == 2)
        #expect(groups.first == ["x"])
        #expect(groups.last.map(Set.init) == ["x", "y"], "the second group holds each id once")
        #expect(groups.last?.count == 2)
    }

    @Test("a group stops at its event limit; the batches left form the groups after it")
    func eventLimit() async throws {
        let recorder = Recorder()
        let (group, waiting) = Self.groupCommit(recorder, limits: .init(maxEvents: 25))
        async let first = group.insert(Self.batch("a"))
        for await _ in recorder.entered { break }
        let answers = try await withThrowingTaskGroup(of: InsertResult.self) { tasks in
            for id in ["b", "c", "d", "e"] { tasks.addTask { try await group.insert(Self.batch(id)) } }
            await Self.waitFor(4, in: waiting)
            recorder.release()
            return try await tasks.reduce(into: [InsertResult]()) { $0.append($1) }
        }
        #expect(try await first == .stored)
        #expect(answers == Array(repeating: .stored, count: 4))
        // 10 events a batch, 25 at most a group: the four that waited go two by two.
        #expect(recorder.groups.map(\.count) == [1, 2, 2])
    }

    @Test("a group that fails fails every request in it, and the next group commits")
    func failedGroup() async throws {
        let recorder = Recorder(failing: ["bad"])
        let (group, waiting) = Self.groupCommit(recorder)
        async let first = group.insert(Self.batch("a"))
        for await _ in recorder.entered { break }
        let bad = Task { try await group.insert(Self.batch("bad")) }
        let withBad = Task { try await group.insert(Self.batch("b")) }
        await Self.waitFor(2, in: waiting)
        recorder.release()
        #expect(try await first == .stored)
        await #expect(throws: StoreUnavailable("refused")) { try await bad.value }
        await #expect(throws: StoreUnavailable("refused")) { try await withBad.value }
        #expect(try await group.insert(Self.batch("b")) == .stored, "nothing of the failed group was kept")
    }

    @Test("with two writers a second group commits while the first is still being written")
    func twoWriters() async throws {
        let recorder = Recorder()
        let (group, _) = Self.groupCommit(recorder, limits: .init(writers: 2))
        async let first = group.insert(Self.batch("a"))
        for await _ in recorder.entered { break }
        #expect(try await group.insert(Self.batch("b")) == .stored, "answered while the first group is held")
        recorder.release()
        #expect(try await first == .stored)
        #expect(recorder.groups == [["a"], ["b"]])
    }
}
