@testable import Strata
import StrataTestSupport
import Testing

/// ASCII text is tokenized byte by byte (`FullText.tokens(of:)`); the scalar-by-scalar path, which
/// the FTS5 comparisons pin (`MainContextFullTextTests`, `FullTextIndexTests`), is its reference.
@Suite struct FullTextTokensTests {
    @Test func everyASCIICharacterSplitsAndFoldsAsTheScalarPath() {
        let all = String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self)
        #expect(FullText.tokens(of: all) == FullText.scalarTokens(of: all))
        #expect(FullText.tokens(of: all) == ["0123456789", "abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz"])
        for byte in UInt8(0)..<128 {
            let text = "a\(Character(Unicode.Scalar(byte)))B"
            #expect(FullText.tokens(of: text) == FullText.scalarTokens(of: text), "byte \(byte)")
        }
    }

    @Test func randomASCIITextTokenizesAsTheScalarPath() {
        let seed = SeededRandom.seed(for: "randomASCIITextTokenizesAsTheScalarPath")
        var random = SeededRandom(seed: seed)
        // Letters and digits weighted up, so that tokens run several characters long.
        let alphabet = (0..<128).map { UInt8($0) } + Array("aZ9kQ0xY".utf8) + Array("eeTT55".utf8)
        for _ in 0..<2_000 {
            let text = String(decoding: (0..<Int.random(in: 0...40, using: &random)).map { _ in
                alphabet.randomElement(using: &random)!
            }, as: UTF8.self)
            #expect(FullText.tokens(of: text) == FullText.scalarTokens(of: text), "seed \(seed), text \(Array(text.utf8))")
        }
    }

    @Test func textWithAnyOtherScalarTakesTheScalarPath() {
        for text in ["Café Crème", "ΣΊΣΥΦΟΣ naïve", "ﬁle straße", "x\u{0301}y"] {
            #expect(FullText.tokens(of: text) == FullText.scalarTokens(of: text))
        }
        #expect(FullText.tokens(of: "Café, CRÈME!") == ["cafe", "creme"])
    }

    /// The byte tokens a bulk build reads (`FullText.forEachToken`) are the reference's, for ASCII
    /// text and any other, with one scratch buffer reused from text to text.
    @Test func byteTokensAreTheScalarPathsTokens() {
        let seed = SeededRandom.seed(for: "byteTokensAreTheScalarPathsTokens")
        var random = SeededRandom(seed: seed)
        let alphabet = (0..<128).map { UInt8($0) } + Array("aZ9kQ0xY".utf8) + Array("eeTT55".utf8)
        var texts = ["", String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self), "Café Crème", "ΣΊΣΥΦΟΣ naïve",
                     "ﬁle straße", "x\u{0301}y", "Café, CRÈME!", "a long ASCII line after the others"]
        for _ in 0..<500 {
            texts.append(String(decoding: (0..<Int.random(in: 0...40, using: &random)).map { _ in
                alphabet.randomElement(using: &random)!
            }, as: UTF8.self))
        }
        var scratch: [UInt8] = []
        for text in texts {
            var tokens: [String] = []
            FullText.forEachToken(of: text, scratch: &scratch) { tokens.append(String(decoding: $0, as: UTF8.self)) }
            #expect(tokens == FullText.scalarTokens(of: text), "seed \(seed), text \(Array(text.utf8))")
        }
    }
}
