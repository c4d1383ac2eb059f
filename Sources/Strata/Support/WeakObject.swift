/// A weak reference to an object, for a slot that must not keep it alive (the main context's
/// accept observer: the store's observers must not keep the context alive).
struct WeakObject: Sendable {
    weak var object: (any AnyObject & Sendable)?
}

/// The store's slot for its main context: owned (a strong reference) from the first use until
/// the store closes, then only remembered (weakly), so that a closed store frees its context
/// once the app lets go of it. While it is owned, the context and the store hold each other;
/// ``Store/close()`` ends that cycle.
struct OwnedObject: Sendable {
    private var owned: (any AnyObject & Sendable)?
    private weak var remembered: (any AnyObject & Sendable)?

    /// The object, owned or remembered.
    var object: (any AnyObject & Sendable)? { owned ?? remembered }

    /// Owns `object` (and remembers it after ``release()``).
    mutating func own(_ object: any AnyObject & Sendable) {
        owned = object
        remembered = object
    }

    /// Stops owning the object; it stays reachable while someone else holds it.
    mutating func release() { owned = nil }
}
