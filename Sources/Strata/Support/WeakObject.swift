/// A weak reference to an object, for a slot that must not keep it alive (the store's slot for
/// its main context: the context holds the store, not the other way round).
struct WeakObject: Sendable {
    weak var object: (any AnyObject & Sendable)?
}
