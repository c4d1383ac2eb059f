/// Splits a `--where` expression into tokens, remembering each one's column.
struct PredicateLexer {
    enum Kind: Equatable {
        case word(String)          // identifiers and keywords
        case integer(Int64)
        case real(Double)
        case string(String)
        case symbol(String)        // = != <> < <= > >= ( ) ,
        case end
    }

    struct Token: Equatable {
        let kind: Kind
        let column: Int

        /// Whether the token is the keyword `keyword` (case-insensitive).
        func isKeyword(_ keyword: String) -> Bool {
            if case .word(let word) = kind { return word.uppercased() == keyword }
            return false
        }
    }

    static func tokens(_ text: String) throws -> [Token] {
        let characters = Array(text)
        var tokens: [Token] = []
        var index = 0
        while index < characters.count {
            let character = characters[index]
            let column = index + 1
            if character.isWhitespace {
                index += 1
            } else if character == "'" || character == "\"" {
                var value = ""
                index += 1
                while true {
                    guard index < characters.count else {
                        throw PredicateSyntaxError(message: "unterminated string", column: column)
                    }
                    if characters[index] == character {
                        if index + 1 < characters.count, characters[index + 1] == character {
                            value.append(character)
                            index += 2
                            continue
                        }
                        index += 1
                        break
                    }
                    value.append(characters[index])
                    index += 1
                }
                tokens.append(Token(kind: .string(value), column: column))
            } else if character.isNumber || ((character == "-" || character == "+" || character == ".")
                                              && index + 1 < characters.count && (characters[index + 1].isNumber || characters[index + 1] == ".")) {
                var end = index + 1
                while end < characters.count, characters[end].isNumber || characters[end] == "." || characters[end] == "e"
                        || characters[end] == "E" || ((characters[end] == "-" || characters[end] == "+")
                                                      && (characters[end - 1] == "e" || characters[end - 1] == "E")) {
                    end += 1
                }
                let literal = String(characters[index..<end])
                if let integer = Int64(literal) {
                    tokens.append(Token(kind: .integer(integer), column: column))
                } else if let real = Double(literal), real.isFinite {
                    tokens.append(Token(kind: .real(real), column: column))
                } else {
                    throw PredicateSyntaxError(message: "'\(literal)' is not a number", column: column)
                }
                index = end
            } else if character.isLetter || character == "_" {
                var end = index + 1
                while end < characters.count, characters[end].isLetter || characters[end].isNumber || characters[end] == "_" {
                    end += 1
                }
                tokens.append(Token(kind: .word(String(characters[index..<end])), column: column))
                index = end
            } else {
                let two = index + 1 < characters.count ? String(characters[index...index + 1]) : ""
                if ["!=", "<>", "<=", ">=", "=="].contains(two) {
                    tokens.append(Token(kind: .symbol(two == "<>" ? "!=" : (two == "==" ? "=" : two)), column: column))
                    index += 2
                } else if "=<>(),".contains(character) {
                    tokens.append(Token(kind: .symbol(String(character)), column: column))
                    index += 1
                } else {
                    throw PredicateSyntaxError(message: "unexpected character '\(character)'", column: column)
                }
            }
        }
        tokens.append(Token(kind: .end, column: characters.count + 1))
        return tokens
    }
}
