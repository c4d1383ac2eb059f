import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// `FullTextIndex` — the main context's inverted index for `.matches` — answers every query as
/// tokenizing every live row does (`FullText.tokens(of:)` and `FullTextTerm.matches`, what
/// `ResolvedFilter` evaluates), after every insert, replace and remove; a copy keeps its answers
/// when the original changes; a bulk build answers as inserting row by row; and SQLite's FTS5
/// answers the same over the same rows.
@Suite struct FullTextIndexTests {
    /// The row positions of the two full-text attributes; position 0 holds a number.
    private static let positions = [1, 2]

    /// Words in mixed case, with Latin diacritics, Greek (final sigma too), CJK, digits, inner
    /// punctuation, and characters whose case folding is not their lowercase (µ, ſ, İ, ϐ, ẛ).
    private static let vocabulary = [
        "meeting", "Meeting", "MEETINGS", "meet", "notes", "note", "NoTeBook", "café", "CAFE", "cafés",
        "résumé", "resume", "naïve", "Über", "uber", "λόγος", "ΛΟΓΟΣ", "λογική", "αλφα", "ΑΛΦΑ", "Βήτα",
        "東京", "東京都", "京都", "2024", "20", "v2", "x1y2", "co-op", "it's", "e.g.", "Straße",
        "λογος", "ΛΟΓΟΣ", "ſtraße", "µs", "μs", "İstanbul", "istanbul", "ϐeta", "ẛ",
    ]
    private static let separators = [" ", "  ", ", ", "; ", "-", "/", ". ", "!? ", "\n", "(", ")", "…"]

    /// One full-text value: text of a few words (sometimes none), NULL, or a value that is not text.
    private static func value(_ random: inout SeededRandom, extraWords: Bool, words: [String] = vocabulary) -> DatabaseValue {
        switch random.next(10) {
        case 0: return .null
        case 1: return [.integer(2024), .real(1.5), .blob(Data([0x6D, 0x65]))][random.next(3)]
        default:
            var text = random.next(4) == 0 ? separators[random.next(separators.count)] : ""
            for place in 0..<random.next(7) {
                if place > 0 { text += separators[random.next(separators.count)] }
                // Many distinct tokens, so that the sorted token list has much to catch up with.
                text += extraWords && random.next(2) == 0 ? "w\(random.next(400))" : words[random.next(words.count)]
            }
            return .text(text)
        }
    }

    private static func row(_ random: inout SeededRandom, extraWords: Bool = false, words: [String] = vocabulary) -> [DatabaseValue] {
        [.integer(Int64(random.next(1_000))), value(&random, extraWords: extraWords, words: words),
         value(&random, extraWords: extraWords, words: words)]
    }

    /// Queries: fixed cases (an absent word, punctuation only, whole words as prefixes, non-Latin
    /// prefixes, two words) and random words, prefixes of words, and pairs.
    private static func queries(_ random: inout SeededRandom, words: [String] = vocabulary) -> [String] {
        var queries = [
            "zzzabsent", "--- !!", "*", "", "meeting*", "meet*", "m*", "東*", "東京*", "λογ*", "ΛΟΓ*", "caf*", "CAFÉ",
            "meeting notes*", "2024 co-op", "2*", "w1*", "résumé zzzabsent*", "e.g.", "it's*",
        ]
        for _ in 0..<12 {
            let word = words[random.next(words.count)]
            let other = words[random.next(words.count)]
            switch random.next(4) {
            case 0: queries.append(word)
            case 1: queries.append(String(word.prefix(1 + random.next(word.count))) + "*")
            case 2: queries.append(word + " " + other + (random.next(2) == 0 ? "*" : ""))
            default: queries.append(word + "*")
            }
        }
        return queries
    }

    /// The answer of evaluating every row: the slots whose tokens every term matches.
    private static func expected(_ terms: [FullTextTerm], _ live: [Int: [DatabaseValue]]) -> [Int] {
        guard !terms.isEmpty else { return [] }
        return live.keys.sorted().filter { slot in
            var tokens: Set<String> = []
            for position in positions {
                if case .text(let text)? = live[slot]?[position] { tokens.formUnion(FullText.tokens(of: text)) }
            }
            return terms.allSatisfy { $0.matches(tokens) }
        }
    }

    private static func check(_ index: FullTextIndex, _ live: [Int: [DatabaseValue]], _ queries: [String], _ context: String) {
        for query in queries {
            let terms = FullText.terms(of: query)
            #expect(index.slots(matching: terms) == expected(terms, live), "\(context), query \(query.debugDescription)")
        }
    }

    /// One random change to `index` and `live` alike: a row inserted in a free slot, or a held
    /// row replaced (sometimes by one with the same text) or removed.
    private static func change(_ index: inout FullTextIndex, _ live: inout [Int: [DatabaseValue]], _ random: inout SeededRandom,
                               slots: Int, extraWords: Bool = false, words: [String] = vocabulary) {
        let slot = random.next(slots)
        guard let old = live[slot] else {
            let new = row(&random, extraWords: extraWords, words: words)
            index.insert(slot, row: new)
            live[slot] = new
            return
        }
        switch random.next(4) {
        case 0:
            index.remove(slot, row: old)
            live[slot] = nil
        case 1:
            // Only the attribute that is not full text changes, or one of the two.
            var new = old
            new[random.next(3)] = random.next(2) == 0 ? .integer(7) : value(&random, extraWords: extraWords, words: words)
            index.replace(slot, old: old, new: new)
            live[slot] = new
        default:
            let new = row(&random, extraWords: extraWords, words: words)
            index.replace(slot, old: old, new: new)
            live[slot] = new
        }
    }

    @Test func answersAsEvaluatingEveryRowAfterEveryChange() {
        var (random, seed) = SeededRandom.forTest(#function)
        var index = FullTextIndex(positions: Self.positions)
        var live: [Int: [DatabaseValue]] = [:]
        for step in 0..<150 {
            Self.change(&index, &live, &random, slots: 48)
            Self.check(index, live, Self.queries(&random), "seed \(seed), step \(step)")
        }
    }

    /// Many changes between queries: the sorted token list catches up from long notes, or is
    /// built again from the tokens when the notes outgrow it.
    @Test func answersAfterBurstsOfChangesBetweenQueries() {
        var (random, seed) = SeededRandom.forTest(#function)
        var index = FullTextIndex(positions: Self.positions)
        var live: [Int: [DatabaseValue]] = [:]
        for round in 0..<25 {
            for _ in 0..<(random.next(3) == 0 ? 1 + random.next(400) : 1 + random.next(8)) {
                Self.change(&index, &live, &random, slots: 300, extraWords: true)
            }
            Self.check(index, live, Self.queries(&random), "seed \(seed), round \(round)")
        }
    }

    @Test func aCopyKeepsItsAnswersWhenTheOriginalChanges() {
        var (random, seed) = SeededRandom.forTest(#function)
        for round in 0..<20 {
            let context = "seed \(seed), round \(round)"
            let rows = (0..<random.next(200)).map { _ in Self.row(&random, extraWords: round.isMultiple(of: 2)) }
            var original = FullTextIndex.built(positions: Self.positions, slots: rows.indices) { rows[$0] }
            var live = Dictionary(uniqueKeysWithValues: rows.enumerated().map { ($0.offset, $0.element) })
            let queries = Self.queries(&random)
            // Queried before the copy, or only after: the copy shares the sorted tokens, or not.
            if random.next(2) == 0 { Self.check(original, live, queries, context) }
            var copy = original
            let copied = live
            Self.check(copy, copied, queries, context + ", copy before the writes")
            for _ in 0..<(1 + random.next(60)) {
                Self.change(&original, &live, &random, slots: 260, extraWords: round.isMultiple(of: 2))
            }
            Self.check(original, live, queries, context + ", original")
            Self.check(copy, copied, queries, context + ", copy after the original's writes")
            // And the other way: the copy's writes leave the original as it was.
            var copyLive = copied
            for _ in 0..<(1 + random.next(60)) { Self.change(&copy, &copyLive, &random, slots: 260) }
            Self.check(copy, copyLive, queries, context + ", copy")
            Self.check(original, live, queries, context + ", original after the copy's writes")
        }
    }

    @Test func buildingInOnePassAnswersAsInsertingRowByRow() {
        var (random, seed) = SeededRandom.forTest(#function)
        for round in 0..<20 {
            let context = "seed \(seed), round \(round)"
            let rows = (0..<random.next(round.isMultiple(of: 4) ? 3 : 400)).map { _ in Self.row(&random, extraWords: true) }
            var built = FullTextIndex.built(positions: Self.positions, slots: rows.indices) { rows[$0] }
            var inserted = FullTextIndex(positions: Self.positions)
            for (slot, row) in rows.enumerated() { inserted.insert(slot, row: row) }
            var live = Dictionary(uniqueKeysWithValues: rows.enumerated().map { ($0.offset, $0.element) })
            let queries = Self.queries(&random)
            for query in queries {
                let terms = FullText.terms(of: query)
                #expect(built.slots(matching: terms) == inserted.slots(matching: terms), "\(context), query \(query.debugDescription)")
            }
            Self.check(built, live, queries, context)
            #expect(built.memoryBytes > 0, Comment(rawValue: context))
            // A built index takes changes like any other, its sorted tokens not yet made.
            var insertedLive = live
            for _ in 0..<40 {
                Self.change(&built, &live, &random, slots: 450, extraWords: true)
                Self.change(&inserted, &insertedLive, &random, slots: 450, extraWords: true)
            }
            Self.check(built, live, queries, context + ", built, changed")
            Self.check(inserted, insertedLive, queries, context + ", inserted, changed")
        }
    }

    /// A bulk build tells tokens apart by their bytes: two canonically equivalent spellings of one
    /// token (Greek alpha with oxia, U+1F71, and with tonos, U+03AC) still make one posting list,
    /// as inserting row by row makes it.
    @Test func buildingMergesCanonicallyEquivalentTokens() {
        let rows: [[DatabaseValue]] = [
            [.integer(0), .text("\u{1F71}"), .null], [.integer(1), .text("x"), .text("\u{03AC} y")],
            [.integer(2), .text("\u{1F71}\u{1F71} \u{03AC}"), .null],
        ]
        let built = FullTextIndex.built(positions: Self.positions, slots: rows.indices) { rows[$0] }
        var inserted = FullTextIndex(positions: Self.positions)
        for (slot, row) in rows.enumerated() { inserted.insert(slot, row: row) }
        for query in ["\u{03AC}", "\u{1F71}", "\u{03AC}*", "\u{1F71} y", "x*"] {
            let terms = FullText.terms(of: query)
            #expect(built.slots(matching: terms) == inserted.slots(matching: terms), "query \(query.debugDescription)")
        }
        #expect(built.slots(matching: FullText.terms(of: "\u{03AC}")) == [0, 1, 2])
    }

    /// The same rows in an FTS5 table (unicode61, FTS5's default tokenizer), changed alike, give
    /// the same rowids for every query, sent as `FullText.matchExpression` sends it — Greek
    /// accents, "ß" and upper-case Greek included (FTS5 folds one character to one and strips
    /// diacritics from Latin letters only, as `FullText` does).
    @Test func answersAsSQLiteFTS5() throws {
        var (random, seed) = SeededRandom.forTest(#function)
        let directory = try TemporaryDirectory()
        let connection = try Connection(path: directory.path("fts.sqlite"), options: Connection.Options())
        try connection.execute("CREATE VIRTUAL TABLE t USING fts5(a, b)")
        // FTS5 would index a number's text; the index (as evaluating a row) indexes text only.
        func text(_ value: DatabaseValue) -> DatabaseValue {
            if case .text = value { return value }
            return .null
        }
        var index = FullTextIndex(positions: Self.positions)
        var live: [Int: [DatabaseValue]] = [:]
        for step in 0..<200 {
            let before = live
            Self.change(&index, &live, &random, slots: 40, words: Self.vocabulary)
            for slot in Set(before.keys).union(live.keys) where before[slot] != live[slot] {
                try connection.execute("DELETE FROM t WHERE rowid = ?", [.integer(Int64(slot))])
                if let row = live[slot] {
                    try connection.execute("INSERT INTO t(rowid, a, b) VALUES (?, ?, ?)", [.integer(Int64(slot)), text(row[1]), text(row[2])])
                }
            }
            guard step % 5 == 4 else { continue }
            for query in Self.queries(&random, words: Self.vocabulary) {
                let terms = FullText.terms(of: query)
                guard !terms.isEmpty else { continue }  // FTS5 refuses an empty expression
                let rows = try connection.rows("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid", [.text(FullText.matchExpression(terms))])
                let fts5 = rows.compactMap { row -> Int? in
                    if case .integer(let rowid)? = row.first { return Int(rowid) }
                    return nil
                }
                #expect(index.slots(matching: terms) == fts5, "seed \(seed), step \(step), query \(query.debugDescription)")
            }
        }
    }
}
