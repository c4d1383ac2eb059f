import Foundation

extension DatabaseValue {
    /// Parses the SQL literal that ``description`` writes: `NULL`, an integer, a real,
    /// `'text'` (with `''` escapes) or `x'hex'`. Nil for anything else.
    init?(sqlLiteral literal: String) {
        if literal == "NULL" {
            self = .null
        } else if literal.count >= 2, literal.hasPrefix("'"), literal.hasSuffix("'") {
            self = .text(String(literal.dropFirst().dropLast()).replacingOccurrences(of: "''", with: "'"))
        } else if literal.count >= 3, literal.hasPrefix("x'"), literal.hasSuffix("'") {
            let hex = Array(literal.dropFirst(2).dropLast())
            guard hex.count % 2 == 0 else { return nil }
            var bytes: [UInt8] = []
            for index in stride(from: 0, to: hex.count, by: 2) {
                guard let byte = UInt8(String(hex[index...index + 1]), radix: 16) else { return nil }
                bytes.append(byte)
            }
            self = .blob(Data(bytes))
        } else if let integer = Int64(literal) {
            self = .integer(integer)
        } else if let real = Double(literal) {
            self = .real(real)
        } else {
            return nil
        }
    }
}
