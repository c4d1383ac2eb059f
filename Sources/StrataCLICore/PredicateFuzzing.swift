/// The `--where` parser's entry point for the fuzzer and its corpus replay.
@_spi(Fuzzing)
public enum PredicateFuzzing {
    /// Parses `text`; true when it is a valid expression, false when it is rejected with a
    /// syntax error. Never traps.
    public static func parse(_ text: String) -> Bool {
        (try? PredicateParser.parse(text)) != nil
    }
}
