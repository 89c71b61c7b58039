import SpoorModel

/// Identity, super properties, consent and the first-launch flag: what `state.json` keeps (docs/events.md,
/// "Identity"), with the rules for changing it.
///
/// A pure value: each intent (``login(_:)``, ``logout()``, ``identify(_:)``, ``register(_:)``, ``optOut()``…)
/// changes the value and returns an ``IdentityChange`` saying what the owner must do about it: build a new
/// snapshot for later events, save the state, record a `$SignUp`. No I/O, no lock, no clock.
package struct TrackerIdentity: Equatable, Sendable {
    /// The state as it is saved, but for `nextSequence`, which is 0 here: sequence numbers are leased by the
    /// writer (``SequenceLeases``) straight from the state file.
    package private(set) var persisted: PersistedState

    package init(_ persisted: PersistedState) {
        self.persisted = persisted
        self.persisted.nextSequence = 0
    }

    // MARK: Reading

    /// The login id when logged in, else the anonymous id.
    package var distinctID: String { persisted.loginID ?? persisted.anonymousID }
    package var anonymousID: String { persisted.anonymousID }
    package var loginID: String? { persisted.loginID }
    package var deviceID: String { persisted.deviceID }
    package var superProperties: Properties { persisted.superProperties.mapValues(\.value) }
    /// Whether the user opted out: nothing is recorded while they are.
    package var isOptedOut: Bool { persisted.optedOut }

    /// How many times stored data was erased, this process's erasures included.
    package var deletions: UInt64 { persisted.deletions }

    /// Whether `id` can be a login or anonymous id: not empty, not only white space, at most 255 bytes, no NUL.
    ///
    /// Checked on every `track(_:distinctID:properties:)`, so from one pass over the bytes: an ASCII byte that is
    /// not white space starts a character that is not, so only an id made of white space and non-ASCII bytes needs
    /// the look at its characters.
    package static func isValidID(_ id: String) -> Bool {
        let checked = id.utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
            guard !bytes.isEmpty, bytes.count <= 255 else { return false }
            var seenNonSpace = false
            for byte in bytes {
                if byte == 0 { return false }
                if byte < 0x80, byte != 0x20, !(0x09...0x0D).contains(byte) { seenNonSpace = true }
            }
            return seenNonSpace ? true : nil
        }
        if let checked, let answer = checked { return answer }
        return !id.isEmpty && id.utf8.count <= 255 && !id.allSatisfy(\.isWhitespace) && !PropertyValidator.containsNUL(id)
    }

    // MARK: Intents

    /// What the tracker asks of its identity; `login` is its own step (``PipelineState/login(_:at:)``), since its
    /// `$SignUp` enters the queue with it.
    package enum Intent: Equatable, Sendable {
        case logout
        case identify(String)
        case register(Properties)
        case unregister(String)
        case clearSuperProperties
        case optOut
        case optIn
        case consumeFirstLaunch
        /// The stored data was erased here, the `count`th erasure: every other process sharing the state erases
        /// what it holds. Made again on a state that already counts it, it changes nothing.
        case deleteStoredData(count: UInt64)
    }

    /// Carries out `intent`; what it changed.
    package mutating func apply(_ intent: Intent) -> IdentityChange {
        switch intent {
        case .logout: logout()
        case .identify(let id): identify(id)
        case .register(let properties): register(properties)
        case .unregister(let key): unregister(key)
        case .clearSuperProperties: clearSuperProperties()
        case .optOut: optOut()
        case .optIn: optIn()
        case .consumeFirstLaunch: consumeFirstLaunch()
        case .deleteStoredData(let count): deleteStoredData(count: count)
        }
    }

    /// Makes `change` again, on a state another process may have changed since (nothing is recorded for it).
    package mutating func replay(_ change: SharedChange) {
        switch change {
        case .intent(let intent): _ = apply(intent)
        case .login(let loginID): _ = login(loginID)
        }
    }

    // MARK: Identity

    /// Logs `loginID` in. Unchanged when it is already logged in; otherwise later events carry it, and a
    /// `$SignUp` is due (with the anonymous id as its original id) unless the user opted out.
    package mutating func login(_ loginID: String) -> IdentityChange {
        guard persisted.loginID != loginID else { return .none }
        let anonymous = persisted.anonymousID
        persisted.loginID = loginID
        var change = IdentityChange.identity
        if !persisted.optedOut { change.signUpOriginalID = anonymous }
        return change
    }

    /// Logs the user out: later events carry the anonymous id.
    package mutating func logout() -> IdentityChange {
        guard persisted.loginID != nil else { return .none }
        persisted.loginID = nil
        return .identity
    }

    /// Replaces the anonymous id.
    package mutating func identify(_ anonymousID: String) -> IdentityChange {
        guard persisted.anonymousID != anonymousID else { return .none }
        persisted.anonymousID = anonymousID
        return .identity
    }

    // MARK: Super properties

    /// Adds or replaces super properties (already validated).
    package mutating func register(_ properties: Properties) -> IdentityChange {
        var changed = false
        for (key, value) in properties where persisted.superProperties[key]?.value != value {
            persisted.superProperties[key] = StoredValue(value)
            changed = true
        }
        return changed ? .identity : .none
    }

    /// Removes one super property.
    package mutating func unregister(_ key: String) -> IdentityChange {
        persisted.superProperties.removeValue(forKey: key) == nil ? .none : .identity
    }

    /// Removes every super property.
    package mutating func clearSuperProperties() -> IdentityChange {
        guard !persisted.superProperties.isEmpty else { return .none }
        persisted.superProperties.removeAll()
        return .identity
    }

    // MARK: Consent and first launch

    /// The user opts out; saved, so it holds at the next launch.
    package mutating func optOut() -> IdentityChange {
        guard !persisted.optedOut else { return .none }
        persisted.optedOut = true
        return .saveOnly
    }

    /// The user opts in again.
    package mutating func optIn() -> IdentityChange {
        guard persisted.optedOut else { return .none }
        persisted.optedOut = false
        return .saveOnly
    }

    /// Counts an erasure of the stored data (the `count`th), for the other processes to follow.
    package mutating func deleteStoredData(count: UInt64) -> IdentityChange {
        guard count > persisted.deletions else { return .none }
        persisted.deletions = count
        return .saveOnly
    }

    /// Whether this is the install's first launch; true once only (the flag is cleared and saved).
    package mutating func consumeFirstLaunch() -> IdentityChange {
        guard persisted.firstLaunchPending else { return .none }
        persisted.firstLaunchPending = false
        return .saveOnly
    }
}

/// What an intent on ``TrackerIdentity`` asks of its owner.
package struct IdentityChange: Equatable, Sendable {
    /// The identity or the super properties changed: events from now on need a new snapshot.
    package var snapshot = false
    /// Something `state.json` keeps changed.
    package var save = false
    /// A `$SignUp` is to be recorded, with this original (anonymous) id.
    package var signUpOriginalID: String?

    package init(snapshot: Bool = false, save: Bool = false, signUpOriginalID: String? = nil) {
        self.snapshot = snapshot
        self.save = save
        self.signUpOriginalID = signUpOriginalID
    }

    /// Whether anything changed.
    package var changed: Bool { save }

    package static let none = IdentityChange()
    package static let identity = IdentityChange(snapshot: true, save: true)
    package static let saveOnly = IdentityChange(save: true)
}

/// A change this process made to the shared state (``PersistentStateFile``), kept until the state file holds it:
/// the writer makes it again on what the file holds when it saves (another process may have changed the file
/// since), and a reload makes it again on what it read, so a change is never lost to another process's.
package enum SharedChange: Equatable, Sendable {
    case intent(TrackerIdentity.Intent)
    case login(String)
}
