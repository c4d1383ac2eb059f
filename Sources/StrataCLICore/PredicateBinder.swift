import Foundation
import Strata

/// Turns a parsed `--where` expression into the library's ``Filter`` for one entity: attribute
/// names are checked against its recorded schema and literals converted to the attribute's
/// stored form (booleans to 0/1, ISO 8601 dates to seconds, UUIDs to canonical text).
struct PredicateBinder {
    let schema: EntitySchema

    func bind(_ expression: PredicateExpression) throws -> Filter {
        switch expression {
        case .constant(let value): return value ? .all : .none
        case .isTrue(let name):
            let attribute = try self.attribute(name)
            guard attribute.type == .bool else {
                throw PredicateSyntaxError(message: "'\(name.text)' is \(Self.describe(attribute.type)), not true/false; "
                                     + "compare it with a value", column: name.column)
            }
            return Attribute(attribute.name) == true
        case .compare(let name, let comparison, let literal):
            let attribute = try self.attribute(name)
            let value = try convert(literal, for: attribute)
            let target = Attribute(attribute.name)
            if value.isNull, comparison != .equal, comparison != .notEqual {
                throw PredicateSyntaxError(message: "null can only be compared with = or != (IS NULL, IS NOT NULL)",
                                     column: literal.column)
            }
            switch comparison {
            case .equal: return target == value
            case .notEqual: return target != value
            case .less: return target < value
            case .lessOrEqual: return target <= value
            case .greater: return target > value
            case .greaterOrEqual: return target >= value
            }
        case .isIn(let name, let literals, let negated):
            let attribute = try self.attribute(name)
            let filter = Attribute(attribute.name).in(try literals.map { try convert($0, for: attribute) })
            return negated ? !filter : filter
        case .isNull(let name, let negated):
            let attribute = try self.attribute(name)
            return negated ? Attribute(attribute.name).isNotNull : Attribute(attribute.name).isNull
        case .beginsWith(let name, let literal):
            return Attribute(try textAttribute(name, "BEGINSWITH").name).hasPrefix(try string(literal))
        case .contains(let name, let literal):
            return Attribute(try textAttribute(name, "CONTAINS").name).contains(try string(literal))
        case .match(let literal):
            guard !schema.fullTextAttributes.isEmpty else {
                throw PredicateSyntaxError(message: "entity \(schema.name) has no full-text attributes; MATCH needs them",
                                     column: literal.column)
            }
            return .matches(try string(literal))
        case .and(let expressions): return .all(try expressions.map(bind))
        case .or(let expressions): return .any(try expressions.map(bind))
        case .not(let expression): return !(try bind(expression))
        }
    }

    private func attribute(_ name: PredicateExpression.Name) throws -> AttributeSchema {
        if let position = schema.position(of: name.text) { return schema.attributes[position] }
        var message = "unknown attribute '\(name.text)' of entity \(schema.name)"
        if let close = schema.attributes.first(where: { $0.name.lowercased() == name.text.lowercased() }) {
            message += " (did you mean '\(close.name)'?)"
        } else {
            message += " (it has: " + schema.attributes.map(\.name).joined(separator: ", ") + ")"
        }
        throw PredicateSyntaxError(message: message, column: name.column)
    }

    private func textAttribute(_ name: PredicateExpression.Name, _ keyword: String) throws -> AttributeSchema {
        let attribute = try self.attribute(name)
        guard [.text, .url, .uuid, .decimal, .json].contains(attribute.type) else {
            throw PredicateSyntaxError(message: "\(keyword) needs a text attribute; '\(name.text)' is \(Self.describe(attribute.type))",
                                 column: name.column)
        }
        return attribute
    }

    private func string(_ literal: PredicateExpression.Literal) throws -> String {
        guard case .string(let text) = literal.value else {
            throw PredicateSyntaxError(message: "expected a quoted string", column: literal.column)
        }
        return text
    }

    /// The literal as the attribute stores it.
    private func convert(_ literal: PredicateExpression.Literal, for attribute: AttributeSchema) throws -> DatabaseValue {
        func mismatch(_ expected: String) -> PredicateSyntaxError {
            PredicateSyntaxError(message: "'\(attribute.name)' is \(Self.describe(attribute.type)); expected \(expected), "
                           + "found \(Self.describe(literal.value))", column: literal.column)
        }
        switch (attribute.type, literal.value) {
        case (_, .null): return .null
        case (.bool, .bool(let value)): return .integer(value ? 1 : 0)
        case (.bool, .integer(let value)) where value == 0 || value == 1: return .integer(value)
        case (.bool, _): throw mismatch("true or false")
        case (.integer, .integer(let value)): return .integer(value)
        case (.integer, .real(let value)), (.real, .real(let value)): return .real(value)
        case (.real, .integer(let value)): return .integer(value)
        case (.integer, _), (.real, _): throw mismatch("a number")
        case (.date, .string(let text)):
            do {
                return try ISO8601Date.parse(text).databaseValue
            } catch {
                throw PredicateSyntaxError(message: error.description, column: literal.column)
            }
        case (.date, .integer(let value)): return .integer(value)
        case (.date, .real(let value)): return .real(value)
        case (.date, _): throw mismatch("an ISO 8601 date string")
        case (.uuid, .string(let text)):
            guard let uuid = UUID(uuidString: text) else {
                throw PredicateSyntaxError(message: "'\(text)' is not a UUID", column: literal.column)
            }
            return uuid.databaseValue
        case (.text, .string(let text)), (.url, .string(let text)), (.decimal, .string(let text)), (.json, .string(let text)):
            return .text(text)
        case (.data, _): throw PredicateSyntaxError(message: "'\(attribute.name)' holds data, which --where cannot compare",
                                              column: literal.column)
        default: throw mismatch("a quoted string")
        }
    }

    static func describe(_ type: AttributeType) -> String {
        switch type {
        case .bool: return "true/false"
        case .integer: return "an integer"
        case .real: return "a number"
        case .text: return "text"
        case .date: return "a date"
        case .uuid: return "a UUID"
        case .data: return "data"
        case .url: return "a URL"
        case .decimal: return "a decimal"
        case .json: return "JSON"
        }
    }

    static func describe(_ value: PredicateExpression.Literal.Value) -> String {
        switch value {
        case .integer(let value): return "\(value)"
        case .real(let value): return "\(value)"
        case .string(let value): return "'\(value)'"
        case .bool(let value): return "\(value)"
        case .null: return "null"
        }
    }
}
