/// Parses the `--where` syntax of `strata query`:
///
/// ```
/// expression  := term (OR term)*
/// term        := factor (AND factor)*
/// factor      := NOT factor | '(' expression ')' | TRUE | FALSE | MATCH 'text' | condition
/// condition   := attribute                     -- a true/false attribute that is true
///              | attribute ( ('=' | '!=' | '<>' | '<' | '<=' | '>' | '>=') literal
///                          | [NOT] IN '(' literal (',' literal)* ')'
///                          | IS [NOT] NULL
///                          | BEGINSWITH 'text' | CONTAINS 'text' )
/// literal     := integer | real | 'string' | "string" | true | false | null
/// ```
///
/// Keywords are case-insensitive; attributes are the entity's attribute (coding key) names.
/// `= null` means `IS NULL`, `!= null` means `IS NOT NULL`. `MATCH` is full-text search over the
/// entity's full-text attributes (every word must occur; `word*` matches a prefix).
/// `BEGINSWITH` and `CONTAINS` compare text byte for byte (case-sensitive). Dates are written as
/// ISO 8601 strings (`'2024-05-01'`, `'2024-05-01T12:00:00Z'`). Examples:
///
/// ```
/// isRead = false AND feedID IN (1, 2, 3)
/// published >= '2024-06-01' AND NOT isStarred
/// MATCH 'swift concurr*' OR title CONTAINS 'Linux'
/// ```
struct PredicateParser {
    private var tokens: [PredicateLexer.Token]
    private var position = 0

    /// Parses `text` into an expression.
    static func parse(_ text: String) throws -> PredicateExpression {
        var parser = PredicateParser(tokens: try PredicateLexer.tokens(text))
        let expression = try parser.expression()
        guard case .end = parser.current.kind else {
            throw PredicateSyntaxError(message: "unexpected \(parser.describe(parser.current)) after a complete expression",
                                 column: parser.current.column)
        }
        return expression
    }

    private init(tokens: [PredicateLexer.Token]) { self.tokens = tokens }

    private var current: PredicateLexer.Token { tokens[position] }

    private mutating func advance() -> PredicateLexer.Token {
        let token = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        return token
    }

    private mutating func accept(keyword: String) -> Bool {
        guard current.isKeyword(keyword) else { return false }
        _ = advance()
        return true
    }

    private mutating func accept(symbol: String) -> Bool {
        guard current.kind == .symbol(symbol) else { return false }
        _ = advance()
        return true
    }

    private mutating func expect(symbol: String, _ what: String) throws {
        guard accept(symbol: symbol) else {
            throw PredicateSyntaxError(message: "expected \(what), found \(describe(current))", column: current.column)
        }
    }

    private func describe(_ token: PredicateLexer.Token) -> String {
        switch token.kind {
        case .word(let word): return "'\(word)'"
        case .integer(let value): return "'\(value)'"
        case .real(let value): return "'\(value)'"
        case .string(let value): return "the string '\(value)'"
        case .symbol(let symbol): return "'\(symbol)'"
        case .end: return "the end of the expression"
        }
    }

    private mutating func expression() throws -> PredicateExpression {
        var terms = [try term()]
        while accept(keyword: "OR") { terms.append(try term()) }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func term() throws -> PredicateExpression {
        var factors = [try factor()]
        while accept(keyword: "AND") { factors.append(try factor()) }
        return factors.count == 1 ? factors[0] : .and(factors)
    }

    private mutating func factor() throws -> PredicateExpression {
        if accept(keyword: "NOT") { return .not(try factor()) }
        if accept(symbol: "(") {
            let inner = try expression()
            try expect(symbol: ")", "')'")
            return inner
        }
        if accept(keyword: "TRUE") { return .constant(true) }
        if accept(keyword: "FALSE") { return .constant(false) }
        if current.isKeyword("MATCH") || current.isKeyword("MATCHES") {
            _ = advance()
            return .match(try stringLiteral(after: "MATCH"))
        }
        return try condition()
    }

    private mutating func condition() throws -> PredicateExpression {
        let token = advance()
        guard case .word(let word) = token.kind else {
            throw PredicateSyntaxError(message: "expected an attribute name, found \(describe(token))", column: token.column)
        }
        let name = PredicateExpression.Name(text: word, column: token.column)
        if case .symbol(let symbol) = current.kind, let comparison = PredicateExpression.Comparison(rawValue: symbol) {
            _ = advance()
            return .compare(name, comparison, try literal(after: "'\(symbol)'"))
        }
        if current.kind == .end || current.kind == .symbol(")") || current.isKeyword("AND") || current.isKeyword("OR") {
            return .isTrue(name)
        }
        if accept(keyword: "IS") {
            let negated = accept(keyword: "NOT")
            guard accept(keyword: "NULL") else {
                throw PredicateSyntaxError(message: "expected NULL after IS\(negated ? " NOT" : ""), found \(describe(current))",
                                     column: current.column)
            }
            return .isNull(name, negated: negated)
        }
        let negated = accept(keyword: "NOT")
        if accept(keyword: "IN") {
            try expect(symbol: "(", "'(' after IN")
            var values = [try literal(after: "'('")]
            while accept(symbol: ",") { values.append(try literal(after: "','")) }
            try expect(symbol: ")", "')' or ',' in the IN list")
            return .isIn(name, values, negated: negated)
        }
        if negated {
            throw PredicateSyntaxError(message: "expected IN after NOT, found \(describe(current))", column: current.column)
        }
        if accept(keyword: "BEGINSWITH") { return .beginsWith(name, try stringLiteral(after: "BEGINSWITH")) }
        if accept(keyword: "CONTAINS") { return .contains(name, try stringLiteral(after: "CONTAINS")) }
        throw PredicateSyntaxError(message: "expected an operator (= != < <= > >= IN IS BEGINSWITH CONTAINS) after '\(word)', "
                             + "found \(describe(current))", column: current.column)
    }

    private mutating func literal(after what: String) throws -> PredicateExpression.Literal {
        let token = advance()
        let value: PredicateExpression.Literal.Value
        switch token.kind {
        case .integer(let integer): value = .integer(integer)
        case .real(let real): value = .real(real)
        case .string(let string): value = .string(string)
        case .word(let word) where word.uppercased() == "TRUE": value = .bool(true)
        case .word(let word) where word.uppercased() == "FALSE": value = .bool(false)
        case .word(let word) where word.uppercased() == "NULL": value = .null
        default:
            throw PredicateSyntaxError(message: "expected a value after \(what), found \(describe(token))"
                                 + (token.kind.isWord ? " (quote strings: 'text')" : ""), column: token.column)
        }
        return PredicateExpression.Literal(value: value, column: token.column)
    }

    private mutating func stringLiteral(after keyword: String) throws -> PredicateExpression.Literal {
        let token = advance()
        guard case .string(let string) = token.kind else {
            throw PredicateSyntaxError(message: "expected a quoted string after \(keyword), found \(describe(token))",
                                 column: token.column)
        }
        return PredicateExpression.Literal(value: .string(string), column: token.column)
    }
}

extension PredicateLexer.Kind {
    var isWord: Bool {
        if case .word = self { return true }
        return false
    }
}
