import Foundation

/// The store's history after a token, as an asynchronous sequence of transactions, oldest
/// first, read a page at a time (``Store/history(since:entities:authors:excludingAuthors:pageSize:)``).
///
/// Each page is one read on the store's queue, after the store has taken in what other writers
/// committed. The sequence ends at the newest transaction committed when its last page was
/// read; iterate again from the last token to read what came since. Iterating twice reads twice.
public struct HistorySequence: AsyncSequence, Sendable {
    /// A transaction of the history.
    public typealias Element = HistoryTransaction

    let store: Store
    let start: ChangeToken
    let request: HistoryRequest

    /// An iterator that starts at the sequence's token.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(store: store, request: request, position: start.generation)
    }

    /// Reads the history a page at a time.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let store: Store
        let request: HistoryRequest
        var position: Int64
        var page: [HistoryTransaction] = []
        var next = 0
        var isLast = false

        /// The next transaction, reading the next page when this one is used up; nil at the end.
        /// - Throws: ``StrataError/Code/historyExpired`` when the history was pruned past the
        ///   position reached; `.closed` after the store closed.
        public mutating func next() async throws -> HistoryTransaction? {
            while next == page.count {
                if isLast { return nil }
                let read = try await store.historyPage(after: position, request)
                (page, position, isLast, next) = (read.transactions, read.token.generation, read.isLast, 0)
            }
            defer { next += 1 }
            return page[next]
        }
    }
}
