import Foundation

/// Reads the entity schemas a store recorded in `strata_entities`, without the app's types.
///
/// The recorded JSON is what ``EntitySchema``'s `Encodable` conformance wrote; its attribute
/// defaults are stored as SQL literals (`defaultSQL`), which are parsed back here so that a
/// decoded schema equals — and fingerprints like — the schema the app registered.
enum StoredSchema {
    private struct Stored: Decodable {
        struct Attribute: Decodable {
            var name: String
            var column: String
            var type: AttributeType
            var isOptional: Bool
            var defaultSQL: String
        }
        var name: String
        var table: String
        var attributes: [Attribute]
        var primaryKeyIndex: Int
        var indexes: [EntityIndex]
        var fullTextAttributes: [String]
        var isResident: Bool
        var archiveVersion: Int?
        var snapshotOrder: [SortKey]?
        var deferredAttributes: [String]?
    }

    /// Decodes one recorded schema.
    /// - Throws: `.corrupt` when `json` is not JSON; `.newerSchema` when it is JSON this build
    ///   cannot read (an attribute type it does not know, a missing field): a later Strata wrote it.
    static func decode(_ json: String, entity: String, path: String) throws -> EntitySchema {
        guard (try? JSONSerialization.jsonObject(with: Data(json.utf8))) != nil else {
            throw StrataError(.corrupt, "the recorded schema of entity \(entity) is not JSON", path: path, entity: entity)
        }
        let stored: Stored
        do {
            stored = try JSONDecoder().decode(Stored.self, from: Data(json.utf8))
        } catch {
            throw StrataError(.newerSchema, "the recorded schema of entity \(entity) cannot be read by this version of "
                              + "Strata (\(describe(error))); it was probably written by a newer one", path: path, entity: entity)
        }
        var attributes: [AttributeSchema] = []
        for attribute in stored.attributes {
            guard let value = DatabaseValue(sqlLiteral: attribute.defaultSQL) else {
                throw StrataError(.corrupt, "attribute \(attribute.name) of entity \(entity) has an unreadable default "
                                  + "'\(attribute.defaultSQL)'", path: path, entity: entity, attribute: attribute.name)
            }
            attributes.append(AttributeSchema(name: attribute.name, column: attribute.column, type: attribute.type,
                                              isOptional: attribute.isOptional, defaultValue: value))
        }
        guard attributes.indices.contains(stored.primaryKeyIndex) else {
            throw StrataError(.corrupt, "the recorded schema of entity \(entity) has no primary key", path: path, entity: entity)
        }
        var schema = EntitySchema(name: stored.name, table: stored.table, attributes: attributes,
                                  primaryKeyIndex: stored.primaryKeyIndex, indexes: stored.indexes,
                                  fullTextAttributes: stored.fullTextAttributes, isResident: stored.isResident,
                                  archiveVersion: stored.archiveVersion ?? 1)
        schema.snapshotOrder = stored.snapshotOrder ?? []
        schema.deferredAttributes = stored.deferredAttributes ?? []
        return schema
    }

    private static func describe(_ error: Error) -> String {
        switch error as? DecodingError {
        case .dataCorrupted(let context)?, .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
            let where_ = context.codingPath.map(\.stringValue).joined(separator: ".")
            return where_.isEmpty ? context.debugDescription : "\(where_): \(context.debugDescription)"
        case .keyNotFound(let key, _)?:
            return "no '\(key.stringValue)' field"
        default:
            return "\(error)"
        }
    }
}
