import StrataSyncWire

/// How a ``SyncEngine`` talks to its server: the four requests of the sync protocol.
///
/// ``HTTPSyncTransport`` speaks the protocol over HTTP to a Strata sync service. An app whose
/// server is an existing web API it does not control implements this protocol over that API
/// instead, keeping the same rules: a push with a batch number the server already applied
/// changes nothing, and a pull returns the entries after a cursor in one order.
///
/// ```swift
/// struct FeedServiceTransport: SyncTransport {
///     func sendSchema(_ schema: SyncSchema) async throws -> SyncSchema { schema }
///     func push(_ request: PushRequest) async throws -> PushResponse { … }
///     func pull(after cursor: String, limit: Int, wait: Int) async throws -> PullResponse { … }
///     func records(after position: String?, limit: Int) async throws -> RecordsResponse { … }
/// }
/// ```
///
/// Errors: throw a ``SyncError``. Those whose ``SyncError/isTransient`` is true (the network, a
/// server failure, too many requests) are retried with backoff; others are reported and
/// stop the round. Any other error is treated as not transient.
public protocol SyncTransport: Sendable {
    /// Sends the device's schema (`PUT /v1/schema`) and returns the space's merged schema.
    func sendSchema(_ schema: SyncSchema) async throws -> SyncSchema

    /// Sends a numbered batch (`POST /v1/push`). A batch the server applied already answers
    /// with `PushResponse.duplicate` set and applies nothing.
    func push(_ request: PushRequest) async throws -> PushResponse

    /// The entries after `cursor` (`GET /v1/pull`), at most `limit`; when there are none, waits
    /// up to `wait` seconds for some before answering with an empty page.
    func pull(after cursor: String, limit: Int, wait: Int) async throws -> PullResponse

    /// A page of every object's current state (`GET /v1/records`), for a device whose cursor
    /// the server no longer serves; `position` nil for the first page.
    func records(after position: String?, limit: Int) async throws -> RecordsResponse
}
