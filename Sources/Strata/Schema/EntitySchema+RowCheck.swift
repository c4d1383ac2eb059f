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
    /// Per attribute, ``AttributeSchema/admittedClasses``.
    var admittedClasses: [StorageClasses] { attributes.map(\.admittedClasses) }
}

extension AttributeSchema {
    /// The storage classes whose values pass ``EntitySchema/checkRow(_:)`` here — the same rule
    /// as a table, for checking cells by their tags without making values (a snapshot's chunks, a
    /// statement's rows).
    var admittedClasses: StorageClasses {
        StorageClasses(StorageClass.allCases.filter { $0 == .null ? isOptional : type.admits($0) })
    }
}

extension AttributeType {
    /// Whether a stored value of this storage class can be read as this type (NULL is judged by
    /// optionality, not here).
    func admits(_ value: DatabaseValue) -> Bool { admits(value.storageClass) }

    /// Whether a stored value of class `storageClass` can be read as this type (NULL is judged by
    /// optionality, not here): the one rule behind ``admits(_:)-(DatabaseValue)``, a table of
    /// tags (``AttributeSchema/admittedClasses``) and a list of `typeof()` names.
    func admits(_ storageClass: StorageClass) -> Bool {
        switch (self, storageClass) {
        case (_, .null): return false
        case (.bool, .integer), (.integer, .integer): return true
        case (.real, .real), (.real, .integer), (.date, .real), (.date, .integer): return true
        case (.text, .text), (.uuid, .text), (.url, .text), (.decimal, .text), (.json, .text): return true
        case (.data, .blob): return true
        default: return false
        }
    }
}
