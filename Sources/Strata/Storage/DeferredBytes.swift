import Synchronization

/// How a deferred ``ArenaPage`` gets its bytes: a fill run once, on the first read of any of
/// them, by whichever thread reads first (a warm start's deferred attributes,
/// ``Entity/deferredAttributes``: a snapshot chunk's compressed frame, decompressed into the page).
///
/// Thread-safe without `@unchecked`: the fill is taken out under a lock (``Locked``: a pthread
/// mutex, which ThreadSanitizer sees — it reported `Synchronization.Mutex`'s futex as no lock at
/// all), so exactly one thread runs it, and the others wait on the lock until it has; `isFilled`
/// is set (releasing) only after the page's bytes are written, and every read of them passes
/// ``fillOnce(_:)`` first, which returns once it has seen it set (acquiring) or filled the page
/// itself. So every read of a deferred page happens after its one write.
final class DeferredBytes: Sendable {
    /// Writes exactly the page's bytes into the buffer given, and returns whether it could; a
    /// failed fill leaves the page zeroed. Set to nil once run, releasing what it holds (the
    /// compressed frame).
    typealias Fill = @Sendable (UnsafeMutableRawBufferPointer) -> Bool

    private let fill: Locked<Fill?>
    private let isFilled = Atomic<Bool>(false)
    private let didFail = Atomic<Bool>(false)

    init(_ fill: @escaping Fill) {
        self.fill = Locked(fill)
    }

    /// Fills `page` unless it has been filled: the first caller runs the fill, any caller at the
    /// same time waits for it.
    @inline(__always)
    func fillOnce(_ page: UnsafeMutableRawBufferPointer) {
        if isFilled.load(ordering: .acquiring) { return }
        fillNow(page)
    }

    @inline(never)
    private func fillNow(_ page: UnsafeMutableRawBufferPointer) {
        fill.withLock { fill in
            guard let body = fill else { return }   // another thread filled it while this one waited
            if !body(page) {
                if let start = page.baseAddress { start.initializeMemory(as: UInt8.self, repeating: 0, count: page.count) }
                didFail.store(true, ordering: .relaxed)
            }
            fill = nil
            isFilled.store(true, ordering: .releasing)
        }
    }

    /// Whether the page has been filled (its fill has run).
    var filled: Bool { isFilled.load(ordering: .acquiring) }

    /// Whether the fill ran and failed (the page reads as zeros).
    var failed: Bool { isFilled.load(ordering: .acquiring) && didFail.load(ordering: .relaxed) }
}
