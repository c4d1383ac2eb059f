import Foundation

extension PushRequest {
    /// Decodes a push body, refusing one larger than `limits` allow before reading it.
    /// - Throws: ``SyncProtocolError`` — `tooLarge`, or `malformed` naming the JSON path
    ///   (`changes[3].ids`) and what was wrong there.
    public static func decode(_ body: Data, limits: SyncLimits = .default) throws -> PushRequest {
        guard body.count <= limits.maxRequestBytes else {
            throw SyncProtocolError(.tooLarge, "the body is \(body.count) bytes; the limit is \(limits.maxRequestBytes)")
        }
        return try JSONBody.decode(PushRequest.self, from: body)
    }

    /// The push with every value resolved to its attribute's type, once every rule holds: the
    /// limits, known entities and attributes, keys and values of their types, one key per
    /// upsert, no values on a deletion.
    /// - Throws: ``SyncProtocolError`` naming the entry (`changes[3]`) and the attribute.
    public func validated(against schema: SyncSchema, limits: SyncLimits = .default) throws -> PushRequest {
        guard !device.isEmpty, device.utf8.count <= limits.maxNameBytes else {
            throw SyncProtocolError(.malformed, "device: an ID of 1 to \(limits.maxNameBytes) bytes is required")
        }
        guard batch >= 1 else { throw SyncProtocolError(.malformed, "batch: numbers start at 1, got \(batch)") }
        guard changes.count <= limits.maxEntries else {
            throw SyncProtocolError(.tooLarge, "changes: \(changes.count) entries; the limit is \(limits.maxEntries)")
        }
        var resolved = self
        for (index, entry) in changes.enumerated() {
            resolved.changes[index] = try entry.validated(at: "changes[\(index)]", against: schema, limits: limits)
        }
        return resolved
    }
}

extension SyncEntry {
    func validated(at path: String, against schema: SyncSchema, limits: SyncLimits) throws -> SyncEntry {
        guard let entitySchema = schema.entities[entity] else {
            throw SyncProtocolError(.unknownEntity, "\(path).entity: \(entity) is not in the space's schema")
        }
        let count = ids.keys.count
        guard count <= limits.maxIDsPerEntry else {
            throw SyncProtocolError(.tooLarge, "\(path).ids: \(count) keys; the limit is \(limits.maxIDsPerEntry)")
        }
        guard count > 0 else { throw SyncProtocolError(.malformed, "\(path).ids: no key") }
        guard op != .upsert || count == 1 else {
            throw SyncProtocolError(.malformed, "\(path).ids: an upsert is of one object, got \(count) keys")
        }
        guard op != .delete || values.isEmpty else {
            throw SyncProtocolError(.malformed, "\(path).values: a delete sets no value")
        }
        guard op == .delete || !values.isEmpty else {
            throw SyncProtocolError(.malformed, "\(path).values: an \(op.rawValue) sets at least one attribute")
        }
        guard time >= 0 else { throw SyncProtocolError(.malformed, "\(path).time: \(time) is negative") }
        for (position, key) in ids.keys.enumerated() {
            switch (key, entitySchema.keyType) {
            case (.integer, .integer): continue
            case (.text(let text), .text) where text.utf8.count <= limits.maxNameBytes: continue
            case (.text, .text):
                throw SyncProtocolError(.tooLarge, "\(path).ids[\(position)]: a key is at most \(limits.maxNameBytes) bytes")
            default:
                throw SyncProtocolError(.typeMismatch,
                    "\(path).ids[\(position)]: \(key) is not a key of \(entity), whose keys are \(entitySchema.keyType.rawValue)")
            }
        }
        var resolved = self
        for (name, value) in values {
            guard let attribute = entitySchema.attributes[name] else {
                throw SyncProtocolError(.unknownAttribute, "\(path).values.\(name): \(entity) has no attribute \(name)")
            }
            guard let typed = value.resolved(as: attribute.type, optional: attribute.optional) else {
                throw SyncProtocolError(.typeMismatch,
                    "\(path).values.\(name): \(value.kindDescription) for \(entity).\(name), which is \(attribute)")
            }
            resolved.values[name] = typed
        }
        return resolved
    }
}
