/// A `--where` expression that cannot be parsed or does not fit the entity, with the 1-based
/// column where the problem is.
struct PredicateSyntaxError: Error, CustomStringConvertible {
    let message: String
    let column: Int

    var description: String { "\(message) (at column \(column))" }
}
