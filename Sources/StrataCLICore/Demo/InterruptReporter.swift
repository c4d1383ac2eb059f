import Foundation
import Strata

/// While the demo runs, turns Ctrl-C (SIGINT) into a report of what it leaves behind — how many
/// articles are committed to the store file — and exit status 130.
///
/// The report runs on an ordinary queue, not in a signal handler (``InterruptSignal``). The
/// count is read from the file through a separate read-only connection (``StoreInspector``): what
/// is committed there is what the next launch would find, whatever the main actor is busy with.
/// The process then ends at once (``InterruptSignal/endProcess(status:)``): the store's WAL keeps every committed transaction.
final class InterruptReporter: @unchecked Sendable {
    // Safe: `step` is only read or written while `lock` is held; `signal` is set once, in `init`.
    private let lock = NSLock()
    private var step = 0
    private var signal: InterruptSignal?

    /// Starts listening for SIGINT until ``cancel()``.
    /// - Parameters:
    ///   - store: the demo's store file.
    ///   - articles: how many articles the run imports.
    ///   - console: where the report goes (standard error).
    init(store: String, articles: Int, console: Console) {
        signal = InterruptSignal { [weak self] in
            console.errorLine("strata: interrupted in step \(self?.currentStep ?? 0) of 7: "
                              + Self.committed(store: store, articles: articles))
            InterruptSignal.endProcess(status: ExitStatus.interrupted)
        }
    }

    /// Records the step the demo is in, for the report.
    func enter(step: Int) {
        lock.lock()
        defer { lock.unlock() }
        self.step = step
    }

    private var currentStep: Int {
        lock.lock()
        defer { lock.unlock() }
        return step
    }

    /// Stops listening and gives SIGINT its previous action back.
    func cancel() { signal?.cancel() }

    /// What the store file holds: `12,000 of 60,000 articles were committed to PATH`.
    static func committed(store: String, articles: Int) -> String {
        guard FileManager.default.fileExists(atPath: store) else { return "nothing was written yet (no store at \(store))" }
        do {
            let inspector = try StoreInspector(path: store)
            let count = try inspector.count(InspectionQuery(entity: Article.entityName))
            return "\(Format.count(count)) of \(Format.count(articles, "article")) "
                + "\(count == 1 ? "was" : "were") committed to \(store); the next run starts over"
        } catch {
            return "the store at \(store) could not be read to count what was committed (\(error))"
        }
    }
}
