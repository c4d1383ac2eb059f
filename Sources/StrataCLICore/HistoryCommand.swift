import ArgumentParser
import Strata

/// `strata history DB`: the store's history — its committed transactions, who wrote them and
/// what they changed — as text or JSON Lines; with `--follow`, live. Opens the file read-only.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List a store's history: its transactions, who wrote them and what they changed.",
        discussion: """
            Each transaction shows its token, its commit time, its origin — store (a Strata store's save, with its author: the saving context's name or the author given at save time) or outside (rows anyone else wrote: another process, the sqlite3 shell) — and per change the operation, the entity, the IDs (the first few when there are many) and, for an update, the attributes it changed. The last line says which token to read on from.

            --since TOKEN starts after a token (default 0: the whole history). A token older than the pruned history exits with status 1, naming the oldest token still available.

            --follow keeps printing transactions as other processes commit them, until Ctrl-C, which ends it with status 0. What other writers committed since a store last looked is shown as one outside transaction.

            --json prints one JSON object per transaction per line (JSON Lines), with every ID.

            Examples:
              strata history reader.sqlite --since 120 --entity Article
              strata history reader.sqlite --excluding-author sync --json | jq .token
              strata history reader.sqlite --follow
            """
    )

    @Argument(help: "The store file.", completion: .file())
    var db: String

    @Option(help: "Start after this token (0 for the whole history).")
    var since: Int64 = 0

    @Option(help: "Only transactions by this author. Repeatable.")
    var author: [String] = []

    @Option(name: .customLong("excluding-author"), help: "Never transactions by this author. Repeatable.")
    var excludedAuthor: [String] = []

    @Option(help: "Only this entity's changes (its name or table name). Repeatable.")
    var entity: [String] = []

    @Flag(help: "Print one JSON object per transaction per line instead of text.")
    var json = false

    @Flag(help: "Keep printing new transactions as they are committed, until Ctrl-C.")
    var follow = false

    @OptionGroup var common: CommonOptions

    /// How many transactions one read holds at most.
    static let pageSize = 100

    func validate() throws {
        if since < 0 { throw ValidationError("--since must be 0 or more") }
    }

    func run() async throws {
        let inspector = try StoreInspector.open(db, logging: common)
        let entities = entity.isEmpty ? nil : try entity.map { try inspector.entity(named: $0).name }
        var output = HistoryOutput(json: json, console: Console.current, entities: inspector.entities)
        // Watch before the first read, so that a commit between the two is seen; Ctrl-C ends the
        // stream, and with it the loop, and the command ends normally.
        let (writes, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        var watch: StoreWriteWatch?, interrupt: InterruptSignal?
        if follow {
            watch = try inspector.watchWrites { continuation.yield() }
            interrupt = InterruptSignal { continuation.finish() }
        }
        defer {
            watch?.cancel()
            interrupt?.cancel()
        }
        var token = ChangeToken(generation: since)
        func readToTheEnd() throws {
            while true {
                let page = try inspector.historyPage(since: token, entities: entities, authors: author.isEmpty ? nil : author,
                                                     excludingAuthors: excludedAuthor, limit: Self.pageSize)
                for transaction in page.transactions { output.print(transaction) }
                token = page.token
                if page.isLast { return }
            }
        }
        do {
            try readToTheEnd()
            if follow {
                for await _ in writes { try readToTheEnd() }
            }
        } catch let error as StrataError where error.code == .historyExpired {
            let oldest = error.oldestAvailableToken?.generation ?? 0
            throw CLIFailure(exitCode: ExitStatus.failure, "\(db): the history no longer reaches back to token "
                             + "\(token.generation): it was pruned through token \(oldest). The oldest token to read "
                             + "from is \(oldest) (--since \(oldest)); what came before is gone: read the store whole.")
        }
        output.finish(at: token)
    }
}
