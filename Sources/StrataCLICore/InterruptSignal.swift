import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("unsupported C library")
#endif

/// Runs a handler on Ctrl-C (SIGINT) instead of SIGINT's default action (ending the process),
/// until ``cancel()``: the one place the CLI takes SIGINT over (the demo's report, `history
/// --follow`'s clean end).
///
/// SIGINT's action is set aside (`SIG_IGN`) and the signal delivered to a dispatch source, so
/// the handler runs on an ordinary queue rather than in a signal handler, where almost nothing
/// is safe to call.
///
/// `@unchecked Sendable` is safe: both properties are `let`s set in `init`; a dispatch source's
/// `cancel()` may be called from any thread, and `signal(2)` is process-wide.
final class InterruptSignal: @unchecked Sendable {
    private let source: DispatchSourceSignal
    private let previousAction: (@convention(c) (Int32) -> Void)?

    /// Starts calling `handler` at each SIGINT, on a global queue.
    init(_ handler: @escaping @Sendable () -> Void) {
        previousAction = signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler(handler: handler)
        source.resume()
    }

    /// Stops listening and gives SIGINT its previous action back.
    func cancel() {
        source.cancel()
        signal(SIGINT, previousAction)
    }

    /// Ends the process at once with `status` (`_exit(2)`: no `atexit` handlers, no flushing of
    /// C streams), for a handler that must not wait for work the interrupt cut short.
    static func endProcess(status: Int32) -> Never {
        _exit(status)
    }
}
