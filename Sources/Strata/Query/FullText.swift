import Foundation

/// One word of a full-text query.
struct FullTextTerm: Sendable, Hashable {
    let token: String
    let isPrefix: Bool

    func matches(_ tokens: Set<String>) -> Bool {
        isPrefix ? tokens.contains { $0.hasPrefix(token) } : tokens.contains(token)
    }
}

/// Full-text tokenization that mirrors SQLite FTS5's default `unicode61` tokenizer: letters,
/// numbers and private-use characters form tokens; everything else separates them; tokens are
/// case-folded and Latin diacritics removed. The same terms are sent to FTS5 as quoted tokens, so
/// SQL and in-memory matching agree.
enum FullText {
    /// The tokens of `text`, folded, in order: ASCII text byte by byte, any other scalar by scalar.
    static func tokens(of text: String) -> [String] {
        var text = text
        return text.withUTF8(asciiTokens) ?? scalarTokens(of: text)
    }

    /// The tokens of any text, scalar by scalar: the reference ``tokens(of:)`` follows.
    static func scalarTokens(of text: String) -> [String] {
        var tokens: [String] = []
        var current = String.UnicodeScalarView()
        func flush() {
            if !current.isEmpty {
                tokens.append(fold(String(current)))
                current.removeAll()
            }
        }
        for scalar in text.unicodeScalars {
            if isTokenCharacter(scalar) { current.append(scalar) } else { flush() }
        }
        flush()
        return tokens
    }

    /// The tokens of ASCII text, nil when it holds any other character: the same as the general
    /// path's, byte by byte. In ASCII the token characters are the letters and digits (every other
    /// character is punctuation, a symbol, a space or a control), and folding is lowercasing. Most
    /// text an app indexes is ASCII, and a merge tokenizes every new or changed object's text.
    private static func asciiTokens(_ bytes: UnsafeBufferPointer<UInt8>) -> [String]? {
        var tokens: [String] = []
        var start = 0
        func flush(_ end: Int) {
            guard end > start else { return }
            tokens.append(String(unsafeUninitializedCapacity: end - start) { buffer in
                for offset in 0..<(end - start) {
                    let byte = bytes[start + offset]
                    buffer[offset] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                }
                return end - start
            })
        }
        for index in bytes.indices {
            let byte = bytes[index]
            guard byte < 0x80 else { return nil }
            let lower = byte | 0x20
            if !(byte >= 0x30 && byte <= 0x39) && !(lower >= 0x61 && lower <= 0x7A) {
                flush(index)
                start = index + 1
            }
        }
        flush(bytes.count)
        return tokens
    }

    static func terms(of query: String) -> [FullTextTerm] {
        var terms: [FullTextTerm] = []
        for word in query.split(whereSeparator: \.isWhitespace) {
            let isPrefix = word.hasSuffix("*")
            let words = tokens(of: String(word))
            for (index, token) in words.enumerated() {
                terms.append(FullTextTerm(token: token, isPrefix: isPrefix && index == words.count - 1))
            }
        }
        return terms
    }

    /// The FTS5 query: each token double-quoted (so no FTS5 syntax can be injected), prefix terms
    /// followed by `*`, all joined with AND.
    static func matchExpression(_ terms: [FullTextTerm]) -> String {
        terms.map { "\"" + $0.token.replacingOccurrences(of: "\"", with: "\"\"") + "\"" + ($0.isPrefix ? "*" : "") }
            .joined(separator: " AND ")
    }

    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .privateUse:
            return true
        default:
            return false
        }
    }

    /// FTS5's unicode61 folding (`remove_diacritics=1`, its default): each character case-folded
    /// one for one — Unicode's simple case folding, so "ß" stays "ß" (unlike full folding's "ss")
    /// and final "ς" becomes "σ" — and diacritics removed from Latin letters only (Greek "ή" keeps
    /// its accent, as FTS5 keeps it).
    private static func fold(_ token: String) -> String {
        if token.utf8.allSatisfy({ $0 < 0x80 }) { return token.lowercased() }
        var folded = String.UnicodeScalarView()
        for scalar in token.unicodeScalars {
            let single = simpleFolding(scalar)
            folded.append(isLatinWithDiacritics(single) ? base(of: single) : single)
        }
        return String(folded)
    }

    /// Unicode's simple case folding of `scalar`: its one-scalar lowercase mapping, except where
    /// folding differs from lowercasing (``foldingExceptions``); the scalar itself when it has no
    /// one-scalar mapping.
    private static func simpleFolding(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        if let folded = foldingExceptions[scalar.value] { return Unicode.Scalar(folded)! }
        let lower = scalar.properties.lowercaseMapping.unicodeScalars
        return lower.count == 1 ? lower.first! : scalar
    }

    /// The characters whose simple case folding (CaseFolding.txt, statuses C and S, as FTS5's
    /// tables have them) is not their lowercase mapping: Greek letter variants and final sigma,
    /// the micro sign, long s, and "İ", whose lowercase mapping is two scalars and whose folding
    /// in FTS5 is "i".
    private static let foldingExceptions: [UInt32: UInt32] = [
        0x00B5: 0x03BC, 0x017F: 0x0073, 0x0130: 0x0069, 0x0345: 0x03B9, 0x03C2: 0x03C3, 0x03D0: 0x03B2,
        0x03D1: 0x03B8, 0x03D5: 0x03C6, 0x03D6: 0x03C0, 0x03F0: 0x03BA, 0x03F1: 0x03C1, 0x03F5: 0x03B5,
        0x1E9B: 0x1E61, 0x1FBE: 0x03B9,
    ]

    /// Whether `scalar` is a Latin letter whose diacritics FTS5 removes: Latin-1 Supplement,
    /// Latin Extended-A and -B, and Latin Extended Additional.
    private static func isLatinWithDiacritics(_ scalar: Unicode.Scalar) -> Bool {
        (0xC0...0x24F).contains(scalar.value) || (0x1E00...0x1EFF).contains(scalar.value)
    }

    /// The letter without its diacritics: the first scalar of its canonical decomposition, when
    /// the rest are combining marks.
    private static func base(of scalar: Unicode.Scalar) -> Unicode.Scalar {
        let decomposed = String(scalar).decomposedStringWithCanonicalMapping.unicodeScalars
        guard let first = decomposed.first, decomposed.count > 1,
              decomposed.dropFirst().allSatisfy({ $0.properties.generalCategory == .nonspacingMark }) else { return scalar }
        return first
    }
}
