import Foundation

/// The check a row read from outside a context (SQLite, a snapshot) passes before a context
/// holds it: values are decoded into the app's types only when read, so what could never decode
/// is refused when it arrives, naming the entity, attribute and object.
extension EntitySchema {
    /// Throws unless every value of `row` has a storage class its attribute's type reads (and
    /// NULL only where the attribute is optional), and the row has one value per attribute.
    func checkRow(_ row: [DatabaseValue]) throws {
        guard row.count == attributes.count else {
            throw StrataError(.typeMismatch, "a row of \(name) has \(row.count) values; the schema has \(attributes.count)",
                              entity: name)
        }
        for (position, attribute) in attributes.enumerated() where !attribute.type.admits(row[position]) {
            let value = row[position]
            if value.isNull, !attribute.isOptional {
                throw StrataError(.unexpectedNull, "\(name).\(attribute.name) is NULL but not optional", entity: name,
                                  attribute: attribute.name, objectID: row[primaryKeyIndex].description)
            }
            if !value.isNull {
                throw StrataError(.typeMismatch, "\(name).\(attribute.name) holds \(value), which a \(attribute.type.rawValue) "
                                  + "attribute cannot read", entity: name, attribute: attribute.name,
                                  objectID: row[primaryKeyIndex].description)
            }
        }
    }
}

extension EntitySchema {
    /// Per attribute, ``AttributeSchema/admittedCellTags``.
    var admittedCellTags: [[Bool]] { attributes.map(\.admittedCellTags) }
}

extension AttributeSchema {
    /// Per cell tag (``AttributeType/storageClasses``' order), whether a value of that storage
    /// class passes ``EntitySchema/checkRow(_:)`` here — the same rule as a table, for checking
    /// cells without making values (a snapshot's chunks, a statement's rows).
    var admittedCellTags: [Bool] {
        AttributeType.storageClasses.map { $0.sample.isNull ? isOptional : type.admits($0.sample) }
    }
}

extension AttributeType {
    /// SQLite's storage classes — their `typeof()` names and a value of each — in the order of
    /// the snapshot's and the column tables' cell tags (0 NULL, 1 integer, 2 real, 3 text, 4 blob):
    /// what turns ``admits(_:)`` into a table of tags or a list of `typeof()` names.
    static let storageClasses: [(name: String, sample: DatabaseValue)] = [
        ("null", .null), ("integer", .integer(0)), ("real", .real(0)), ("text", .text("")), ("blob", .blob(Data())),
    ]

    /// Whether a stored value of this storage class can be read as this type (NULL is judged by
    /// optionality, not here).
    func admits(_ value: DatabaseValue) -> Bool {
        switch (self, value) {
        case (_, .null): return false
        case (.bool, .integer), (.integer, .integer): return true
        case (.real, .real), (.real, .integer), (.date, .real), (.date, .integer): return true
        case (.text, .text), (.uuid, .text), (.url, .text), (.decimal, .text), (.json, .text): return true
        case (.data, .blob): return true
        default: return false
        }
    }
}
