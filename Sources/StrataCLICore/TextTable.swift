/// A plain-text table: a header row and left-aligned columns (right-aligned where numeric),
/// separated by two spaces, without trailing blanks.
struct TextTable {
    var headers: [String]
    var rows: [[String]] = []
    /// Columns to align right (numbers).
    var rightAligned: Set<Int> = []

    init(_ headers: [String], rightAligned: Set<Int> = []) {
        self.headers = headers
        self.rightAligned = rightAligned
    }

    mutating func add(_ row: [String]) { rows.append(row) }

    /// The table's lines, each prefixed with `indent`.
    func lines(indent: String = "") -> [String] {
        let all = [headers] + rows
        let widths = headers.indices.map { column in all.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        return all.map { row in
            var line = ""
            for column in headers.indices {
                let cell = column < row.count ? row[column] : ""
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                if column > 0 { line += "  " }
                line += rightAligned.contains(column) ? pad + cell : cell + pad
            }
            return indent + String(line.reversed().drop(while: { $0 == " " }).reversed())
        }
    }
}
