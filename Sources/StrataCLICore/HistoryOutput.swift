import Strata

/// Prints what `strata history` reads, a transaction at a time as it comes: text, or one JSON
/// object per line (JSON Lines).
struct HistoryOutput {
    let json: Bool
    let console: Console
    /// The primary key's type per entity name, to show IDs as the entity stores them.
    private let keyTypes: [String: AttributeType]
    private var printed = 0

    /// IDs shown in full when a change has at most this many; else the first ``abbreviatedIDs``.
    static let listedIDs = 5
    static let abbreviatedIDs = 3

    init(json: Bool, console: Console, entities: [EntitySchema]) {
        self.json = json
        self.console = console
        keyTypes = Dictionary(entities.map { ($0.name, $0.primaryKey.type) }, uniquingKeysWith: { first, _ in first })
    }

    mutating func print(_ transaction: HistoryTransaction) {
        printed += 1
        if json {
            console.line(Self.json(transaction, keyTypes).rendered(pretty: false))
            return
        }
        let date = ValueFormatter.iso8601(transaction.date.timeIntervalSinceReferenceDate)
        var header = "token \(transaction.token.generation)  \(date)"
        switch transaction.origin {
        case .store: header += "  store  " + (transaction.author.map { "author \($0)" } ?? "no author")
        case .outside: header += "  outside"
        }
        console.line(header)
        let width = transaction.changes.map(\.entity.count).max() ?? 0
        for change in transaction.changes {
            var line = "  \(Self.operation(change.operation))  "
                + change.entity.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + ids(change)
            if !change.changedAttributes.isEmpty { line += "  changed " + change.changedAttributes.joined(separator: ", ") }
            console.line(line)
        }
    }

    /// The last line of text output: how many transactions, and the token to read on from.
    func finish(at token: ChangeToken) {
        guard !json else { return }
        console.line(printed == 0 ? "no transactions after token \(token.generation)"
                     : "\(Format.count(printed, "transaction")); read on with --since \(token.generation)")
    }

    /// The IDs in full when there are few, else their count and the first few: `10,000 IDs: 1, 2, 3, …`.
    private func ids(_ change: HistoryChange) -> String {
        let type = keyTypes[change.entity] ?? .text
        let shown = change.ids.prefix(change.ids.count <= Self.listedIDs ? Self.listedIDs : Self.abbreviatedIDs)
        let list = shown.map { ValueFormatter.text($0, type) }.joined(separator: ", ")
        return change.ids.count <= Self.listedIDs ? list : "\(Format.count(change.ids.count, "ID")): \(list), …"
    }

    static func operation(_ operation: LoggedChange.Operation) -> String {
        switch operation {
        case .insert: "insert"
        case .update: "update"
        case .delete: "delete"
        }
    }

    static func json(_ transaction: HistoryTransaction, _ keyTypes: [String: AttributeType]) -> JSONValue {
        .object([
            ("token", .integer(transaction.token.generation)),
            ("date", .string(ValueFormatter.iso8601(transaction.date.timeIntervalSinceReferenceDate))),
            ("origin", .string(transaction.origin == .store ? "store" : "outside")),
            ("author", .optional(transaction.author.map(JSONValue.string))),
            ("changes", .array(transaction.changes.map { change in
                let type = keyTypes[change.entity] ?? .text
                return .object([
                    ("entity", .string(change.entity)),
                    ("operation", .string(operation(change.operation))),
                    ("ids", .array(change.ids.map { ValueFormatter.json($0, type) })),
                    ("changedAttributes", .array(change.changedAttributes.map(JSONValue.string))),
                ])
            })),
        ])
    }
}
