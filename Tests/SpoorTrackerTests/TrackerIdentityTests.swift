import SpoorModel
import Testing

import SpoorTracker

/// The identity rules on their own: no tracker, no lock, no file.
@Suite("TrackerIdentity")
struct TrackerIdentityTests {
    static func identity(loginID: String? = nil, optedOut: Bool = false, firstLaunch: Bool = true) -> TrackerIdentity {
        TrackerIdentity(PersistedState(
            deviceID: "device", anonymousID: "anonymous", loginID: loginID, superProperties: ["plan": StoredValue("pro")],
            firstDay: "2026-01-01", firstLaunchPending: firstLaunch, nextSequence: 7, optedOut: optedOut))
    }

    @Test func aNewLoginChangesTheIdentityAndAsksForASignUpFromTheAnonymousID() {
        var identity = Self.identity()
        let change = identity.login("user-1")
        #expect(change == IdentityChange(snapshot: true, save: true, signUpOriginalID: "anonymous"))
        #expect(identity.loginID == "user-1")
        #expect(identity.distinctID == "user-1")
        #expect(identity.anonymousID == "anonymous")
    }

    @Test func theSameLoginAgainChangesNothing() {
        var identity = Self.identity(loginID: "user-1")
        #expect(identity.login("user-1") == .none)
        #expect(identity.login("user-2").signUpOriginalID == "anonymous")
    }

    @Test func aLoginWhileOptedOutIsRememberedWithoutASignUp() {
        var identity = Self.identity(optedOut: true)
        #expect(identity.login("user-1") == .identity)
        #expect(identity.loginID == "user-1")
    }

    @Test func logoutGoesBackToTheAnonymousIDOnce() {
        var identity = Self.identity(loginID: "user-1")
        #expect(identity.logout() == .identity)
        #expect(identity.distinctID == "anonymous")
        #expect(identity.logout() == .none)
    }

    @Test func identifyReplacesTheAnonymousID() {
        var identity = Self.identity()
        #expect(identity.identify("anonymous") == .none)
        #expect(identity.identify("device-id-of-the-app") == .identity)
        #expect(identity.distinctID == "device-id-of-the-app")
    }

    @Test func superPropertiesChangeOnlyWhenAValueDoes() {
        var identity = Self.identity()
        #expect(identity.register(["plan": "pro"]) == .none)
        #expect(identity.register(["plan": "team", "seats": 3]) == .identity)
        #expect(identity.superProperties == ["plan": "team", "seats": 3])
        #expect(identity.unregister("missing") == .none)
        #expect(identity.unregister("seats") == .identity)
        #expect(identity.superProperties == ["plan": "team"])
        #expect(identity.clearSuperProperties() == .identity)
        #expect(identity.clearSuperProperties() == .none)
        #expect(identity.superProperties.isEmpty)
    }

    @Test func consentIsSavedButLeavesTheSnapshotAlone() {
        var identity = Self.identity()
        #expect(identity.optIn() == .none)
        #expect(identity.optOut() == .saveOnly)
        #expect(identity.isOptedOut)
        #expect(identity.optOut() == .none)
        #expect(identity.optIn() == .saveOnly)
        #expect(!identity.isOptedOut)
    }

    @Test func theFirstLaunchIsConsumedOnce() {
        var identity = Self.identity()
        let first = identity.consumeFirstLaunch()
        let second = identity.consumeFirstLaunch()
        #expect(first == .saveOnly)
        #expect(second == .none)
        #expect(!identity.persisted.firstLaunchPending)
    }

    @Test func aChangeMadeAgainOnAnotherStateKeepsWhatOnlyTheOtherHeld() {
        var identity = Self.identity()
        #expect(identity.persisted.nextSequence == 0, "the writer leases sequence numbers; the identity keeps none")
        var other = Self.identity(loginID: "someone")
        _ = other.register(["theirs": "x"])
        for change: SharedChange in [.login("user-1"), .intent(.register(["mine": 1])), .intent(.unregister("plan"))] {
            identity.replay(change)
            other.replay(change)
        }
        #expect(other.loginID == "user-1")
        #expect(other.superProperties == ["theirs": "x", "mine": 1])
        #expect(identity.superProperties == ["mine": 1])
    }

    @Test func intentsAreTheMethodsByName() {
        var byIntent = Self.identity(loginID: "user-1")
        var byMethod = byIntent
        let intents: [TrackerIdentity.Intent] = [
            .register(["seats": 3]), .unregister("plan"), .identify("other"), .logout, .optOut, .optIn,
            .consumeFirstLaunch, .clearSuperProperties,
        ]
        let changes = intents.map { byIntent.apply($0) }
        let expected = [
            byMethod.register(["seats": 3]), byMethod.unregister("plan"), byMethod.identify("other"), byMethod.logout(),
            byMethod.optOut(), byMethod.optIn(), byMethod.consumeFirstLaunch(), byMethod.clearSuperProperties(),
        ]
        #expect(changes == expected)
        #expect(byIntent == byMethod)
        #expect(changes.allSatisfy { $0.changed })
    }

    @Test func validIDs() {
        #expect(TrackerIdentity.isValidID("user-42"))
        #expect(TrackerIdentity.isValidID(String(repeating: "x", count: 255)))
        #expect(!TrackerIdentity.isValidID(""))
        #expect(!TrackerIdentity.isValidID("  \t"))
        #expect(!TrackerIdentity.isValidID(String(repeating: "x", count: 256)))
        #expect(!TrackerIdentity.isValidID("a\u{0}b"))
        // White space beyond ASCII, and ids of non-ASCII characters alone.
        #expect(!TrackerIdentity.isValidID("\u{3000}\u{00A0} \u{2028}"))
        #expect(!TrackerIdentity.isValidID("\r\n\u{0B}\u{0C}"))
        #expect(TrackerIdentity.isValidID("用户-42"))
        #expect(TrackerIdentity.isValidID("\u{3000}é"))
        #expect(!TrackerIdentity.isValidID("\u{3000}\u{0}é"))
        #expect(!TrackerIdentity.isValidID(String(repeating: "é", count: 128)))  // 256 bytes
    }
}
