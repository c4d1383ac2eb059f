/// A row whose values are read by position, in schema order, only when asked for: a row array,
/// a live statement, a row held in a context's column table. Decoders, filters and sorts read
/// rows through it, so a row held in columns is never copied out to be looked at.
protocol RowSource {
    func value(at position: Int) -> DatabaseValue
}

extension Array: RowSource where Element == DatabaseValue {
    func value(at position: Int) -> DatabaseValue { self[position] }
}

/// A statement's current row, read column by column.
extension Statement: RowSource {}
