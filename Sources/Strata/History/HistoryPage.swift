/// One page of a store's history, as a reader without the app's types reads it
/// (``StoreInspector/historyPage(since:entities:authors:excludingAuthors:limit:)``).
///
/// ```swift
/// var token = ChangeToken(generation: 0)
/// while true {
///     let page = try inspector.historyPage(since: token)
///     for transaction in page.transactions { print(transaction.token.generation, transaction.changes.count) }
///     token = page.token
///     if page.isLast { break }
/// }
/// ```
public struct HistoryPage: Sendable, Hashable {
    /// The page's transactions that the filters keep, oldest first.
    public let transactions: [HistoryTransaction]
    /// Where the next page starts: pass it as `since`. It is past every transaction the page
    /// read, including those the filters left out.
    public let token: ChangeToken
    /// Whether the page reached the newest transaction committed when it was read: read again
    /// from ``token`` after the file changes.
    public let isLast: Bool
}
