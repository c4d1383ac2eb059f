/// One value as a statement holds it, its text or blob bytes borrowed — valid only until the
/// statement moves on: what lets rows go from SQLite into column cells without a `String` or a
/// `Data` made per value.
enum RawCell {
    case null
    case integer(Int64)
    case real(Double)
    case text(UnsafeRawBufferPointer)
    case blob(UnsafeRawBufferPointer)
}

/// A row whose values can be read as ``RawCell``s, by position (a statement on a row).
protocol CellSource {
    func cell(at position: Int) -> RawCell
}
