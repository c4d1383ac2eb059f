#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("FileWatcher needs a POSIX C library: Glibc, Musl or Darwin")
#endif
import Dispatch
import Foundation

/// Calls a handler when one of some files in a directory is written (a database and its `-wal`):
/// on Linux through inotify on the directory (so a WAL file that is deleted and made again, or a
/// database replaced by a rename, is still seen), elsewhere through a slow poll. Handlers run on
/// one serial queue of the process's, never on the main actor; a burst of writes may call a
/// handler several times, and the handler is expected to coalesce.
///
/// Every watcher of the process shares one inotify instance (`Inotify.shared`): the kernel allows
/// a user few instances (128 by default) and many watches, and an app or a test run may hold many
/// stores open. A watcher is a registration; ``cancel()`` (or deinit) removes it.
///
/// `@unchecked Sendable` is safe: its properties are `let`s set in `init`; a poll's timer is a
/// dispatch source, whose `cancel()` libdispatch allows from any thread, an inotify
/// registration is removed under `Inotify`'s lock, and the follow-ups keep their state in a `Locked`.
final class FileWatcher: @unchecked Sendable {
    private let registration: Registration
    private let followUps: FollowUps?

    private enum Registration {
        case inotify(UUID)
        case poll(DispatchSourceTimer)
    }

    /// Starts watching `directory` for writes to the files called `names`; where there is no
    /// inotify, a slow poll calls `handler` every `pollInterval`.
    /// - Throws: `.cannotOpen` when the directory cannot be watched.
    /// With `followUpDelays`, `handler` is also called at each of those delays after the last
    /// write of a burst (``FollowUps``).
    init(directory: String, names: Set<String>, pollInterval: DispatchTimeInterval = .seconds(1),
         followUpDelays: [DispatchTimeInterval] = [], handler: @escaping @Sendable () -> Void) throws {
        let followUps = followUpDelays.isEmpty ? nil : FollowUps(delays: followUpDelays, handler)
        self.followUps = followUps
        let handler = followUps.map { followUps in { @Sendable in followUps.fired() } } ?? handler
        #if os(Linux)
        registration = .inotify(try Inotify.shared().add(directory: directory, names: names, handler: handler))
        #else
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "strata.file-watcher", qos: .utility))
        timer.schedule(deadline: .now() + pollInterval, repeating: pollInterval)
        timer.setEventHandler(handler: handler)
        timer.resume()
        registration = .poll(timer)
        #endif
    }

    /// After the last write to a store's files seen, the handler is called again at each of these
    /// delays. A commit becomes visible to readers only when its writer updates the WAL index in
    /// the `-shm` file — mapped memory, whose writes inotify does not report — after the WAL write
    /// that woke the watch and, with `synchronous = FULL`, after an fsync: a read at the wake
    /// alone can miss it.
    static let storeFollowUpDelays: [DispatchTimeInterval] = [.milliseconds(10), .milliseconds(100), .seconds(1)]

    /// Watches a store's database file and its companions (`-wal`, `-journal`): every commit to
    /// the file writes one of them. With `followUps`, the handler is called again after a burst
    /// of writes (``storeFollowUpDelays``), so that a commit whose WAL index is updated after the
    /// wake is still seen: both an open ``Store`` and ``StoreInspector``'s watch ask for them.
    /// The one rule for what to watch, for both.
    convenience init(store path: String, followUps: Bool = false, handler: @escaping @Sendable () -> Void) throws {
        let url = URL(fileURLWithPath: path)
        let name = url.lastPathComponent
        try self.init(directory: url.deletingLastPathComponent().path, names: [name, name + "-wal", name + "-journal"],
                      followUpDelays: followUps ? Self.storeFollowUpDelays : [], handler: handler)
    }

    /// Stops watching: no handler call starts after the shared queue has passed this point (a call
    /// already running finishes). Calling it again is harmless.
    func cancel() {
        switch registration {
        case .inotify(let id):
            #if os(Linux)
            try? Inotify.shared().remove(id)
            #endif
        case .poll(let timer):
            timer.cancel()
        }
        followUps?.cancel()
    }

    deinit { cancel() }

    /// Calls a handler at a write and again after it (at each of `delays`), a write after the
    /// first follow-up putting them off again: a burst of writes costs a few calls, and an idle
    /// file none.
    ///
    /// One timer source, re-armed for the next delay each time it fires: cancelling it releases
    /// the handler as soon as libdispatch processes the cancellation, so a closed store is not
    /// kept by follow-ups still scheduled (work items would hold their blocks until their
    /// deadline — up to the last delay after the store closed). Writes while the first follow-up
    /// is still due leave the timer as it is: a commit's many file events re-arm it once.
    ///
    /// `@unchecked Sendable` is safe: `handler`, `delays` and `timer` are set in `init` and never
    /// change; `state` is a `Locked`; a dispatch source may be scheduled and cancelled from any thread.
    final class FollowUps: @unchecked Sendable {
        private enum State {
            /// No follow-up due.
            case idle
            /// The timer is armed for the follow-up at `delays[index]`.
            case armed(index: Int)
            case cancelled
        }

        private let handler: @Sendable () -> Void
        private let delays: [DispatchTimeInterval]
        private let timer: DispatchSourceTimer
        private let state = Locked(State.idle)

        init(delays: [DispatchTimeInterval], _ handler: @escaping @Sendable () -> Void) {
            self.delays = delays
            self.handler = handler
            timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "strata.file-watcher.follow-ups", qos: .utility))
            timer.setEventHandler { [weak self] in self?.followUpDue() }
            timer.schedule(deadline: .distantFuture)
            timer.activate()
        }

        /// A write: the handler now, and the follow-ups from the first delay (unless the first
        /// is still due).
        func fired() {
            let live = state.withLock { state -> Bool in
                switch state {
                case .cancelled: return false
                case .armed(index: 0): return true
                case .idle, .armed:
                    state = .armed(index: 0)
                    timer.schedule(deadline: .now() + delays[0])
                    return true
                }
            }
            if live { handler() }
        }

        /// The timer fired: the handler, and the timer armed for the next delay, if any.
        private func followUpDue() {
            let due = state.withLock { state -> Bool in
                guard case .armed(let index) = state else { return false }
                if index + 1 < delays.count {
                    state = .armed(index: index + 1)
                    timer.schedule(deadline: .now() + delays[index + 1] - delays[index])
                } else {
                    state = .idle
                    timer.schedule(deadline: .distantFuture)
                }
                return true
            }
            if due { handler() }
        }

        func cancel() {
            state.withLock { state in
                if case .cancelled = state { return }
                state = .cancelled
                timer.cancel()
            }
        }

        deinit { cancel() }
    }
}

#if os(Linux)
/// The process's one inotify instance, its watches and their handlers.
///
/// `@unchecked Sendable` is safe: `descriptor`, `source` and `queue` are set once in `init` and
/// only read afterwards; everything that changes (`watches`) is in a `Locked`.
private final class Inotify: @unchecked Sendable {
    private struct Watch {
        var names: Set<[UInt8]>
        var handler: @Sendable () -> Void
        var descriptor: Int32
    }

    private let descriptor: Int32
    private let queue = DispatchQueue(label: "strata.file-watcher", qos: .utility)
    private var source: DispatchSourceRead?
    private let watches = Locked<[UUID: Watch]>([:])

    private static let instance = Locked<Result<Inotify, StrataError>?>(nil)

    /// The shared instance, made on first use.
    static func shared() throws -> Inotify {
        try instance.withLock { slot in
            if let slot { return try slot.get() }
            let made = Result { try Inotify() }.mapError { $0 as? StrataError ?? StrataError(.cannotOpen, "\($0)") }
            slot = made
            return try made.get()
        }
    }

    private init() throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else {
            throw StrataError(.cannotOpen, "cannot watch files for other processes' commits: inotify_init1 failed "
                              + "(errno \(errno))")
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [unowned self] in self.readEvents() }
        source.resume()
        self.source = source
    }

    func add(directory: String, names: Set<String>, handler: @escaping @Sendable () -> Void) throws -> UUID {
        let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO | IN_DELETE)
        let watch = inotify_add_watch(descriptor, directory, mask)
        guard watch >= 0 else {
            throw StrataError(.cannotOpen, "cannot watch \(directory) for other processes' commits: inotify_add_watch "
                              + "failed (errno \(errno))", path: directory)
        }
        let id = UUID()
        watches.withLock { $0[id] = Watch(names: Set(names.map { Array($0.utf8) }), handler: handler, descriptor: watch) }
        return id
    }

    /// Removes a registration, and the directory's watch when it was the last one on it.
    func remove(_ id: UUID) {
        let orphan = watches.withLock { watches -> Int32? in
            guard let removed = watches.removeValue(forKey: id) else { return nil }
            return watches.values.contains { $0.descriptor == removed.descriptor } ? nil : removed.descriptor
        }
        if let orphan { _ = inotify_rm_watch(descriptor, orphan) }
    }

    /// Reads every pending event and calls, once each, the handlers whose directory and names
    /// they match (the kernel pads a name with NULs).
    private func readEvents() {
        var directories: [Int32: Set<[UInt8]>] = [:]
        let capacity = 16 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer, capacity)
            guard count > 0 else { break }   // EAGAIN: nothing more for now
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let length = Int(event.len)
                if length > 0, offset + header + length <= count {
                    let padded = UnsafeRawBufferPointer(start: buffer + offset + header, count: length)
                    let name = Array(padded.prefix { $0 != 0 })
                    directories[event.wd, default: []].insert(name)
                }
                offset += header + length
            }
        }
        guard !directories.isEmpty else { return }
        let handlers = watches.withLock { watches in
            watches.values.filter { watch in !(directories[watch.descriptor] ?? []).isDisjoint(with: watch.names) }
                .map(\.handler)
        }
        for handler in handlers { handler() }
    }
}
#endif
