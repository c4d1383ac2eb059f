import Foundation

/// What the push decoder's fuzz target (Fuzz/Sources/FuzzPush) and its corpus replay in the
/// tests check of one input: it decodes and validates against ``schema``, or it is refused with
/// a ``SyncProtocolError`` — never a trap, never another error — and an accepted push survives
/// being encoded and read again unchanged.
@_spi(Fuzzing) public enum PushFuzzing {
    /// The space's schema the fuzzer's inputs are checked against.
    public static let schema = SyncSchema(entities: [
        "Article": .init(keyType: .integer, attributes: [
            "title": .init(type: .text, optional: false),
            "isRead": .init(type: .integer, optional: false),
            "score": .init(type: .real, optional: true),
            "image": .init(type: .blob, optional: true),
        ]),
        "Feed": .init(keyType: .text, attributes: ["name": .init(type: .text, optional: true)]),
    ])

    /// Small limits, so that the fuzzer reaches them.
    public static let limits = SyncLimits(maxRequestBytes: 4096, maxEntries: 16, maxIDsPerEntry: 64, maxNameBytes: 32)

    /// What became of one input.
    public enum Outcome: Sendable, Equatable {
        /// Decoded and valid.
        case accepted
        /// Refused with this code.
        case refused(SyncProtocolError.Code)
        /// A broken rule: a different error, or an accepted push that reads back differently.
        case broken(String)
    }

    /// Checks one input.
    public static func check(_ body: Data) -> Outcome {
        do {
            let push = try PushRequest.decode(body, limits: limits).validated(against: schema, limits: limits)
            let again = try PushRequest.decode(JSONEncoder().encode(push), limits: SyncLimits(maxRequestBytes: .max))
                .validated(against: schema, limits: limits)
            return again == push ? .accepted : .broken("an accepted push reads back differently")
        } catch let error as SyncProtocolError {
            return .refused(error.error)
        } catch {
            return .broken("refused with \(type(of: error)), not SyncProtocolError: \(error)")
        }
    }
}
