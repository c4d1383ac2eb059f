import Strata

/// Prints what `strata query` found: a table or JSON rows, or a query plan.
struct QueryOutput {
    let schema: EntitySchema
    let json: Bool
    let console: Console

    static let cellWidth = 40

    func rows(_ rows: [Row], matching: Int, offset: Int) {
        let types = schema.attributes.map(\.type)
        if json {
            let objects = rows.map { row in
                JSONValue.object(zip(row.columns, zip(row.values, types)).map { ($0, ValueFormatter.json($1.0, $1.1)) })
            }
            console.line(JSONValue.object([
                ("entity", .string(schema.name)),
                ("matching", .int(matching)),
                ("offset", .int(offset)),
                ("rows", .array(objects)),
            ]).rendered())
            return
        }
        var table = TextTable(schema.attributes.map(\.name),
                              rightAligned: Set(types.indices.filter { types[$0] == .integer || types[$0] == .real }))
        for row in rows {
            table.add(zip(row.values, types).map { ValueFormatter.text($0, $1, width: Self.cellWidth) })
        }
        for line in table.lines() { console.line(line) }
        var footer = "\(Format.count(rows.count)) \(rows.count == 1 ? "row" : "rows")"
        if rows.count + offset < matching || offset > 0 {
            footer += " (\(offset > 0 ? "from \(Format.count(offset + 1)), " : "")of \(Format.count(matching)) matching"
                + (rows.count + offset < matching ? "; --limit or --all for more" : "") + ")"
        }
        console.line(footer)
    }

    func plan(_ steps: [QueryPlanStep], sql: String, arguments: [DatabaseValue]) {
        if json {
            console.line(JSONValue.object([
                ("sql", .string(sql)),
                ("arguments", .array(arguments.map { .string($0.description) })),
                ("plan", .array(steps.map { .object([("id", .int($0.id)), ("parent", .int($0.parent)), ("detail", .string($0.detail))]) })),
            ]).rendered())
            return
        }
        console.line("SQL        \(sql)")
        console.line("arguments  " + (arguments.isEmpty ? "(none)" : arguments.map(\.description).joined(separator: ", ")))
        console.line("QUERY PLAN")
        for line in Self.tree(steps) { console.line(line) }
    }

    /// The plan as `sqlite3` draws it: `|--` for a step with siblings after it, `` `-- `` for the last.
    static func tree(_ steps: [QueryPlanStep]) -> [String] {
        var lines: [String] = []
        func draw(parent: Int, prefix: String) {
            let children = steps.filter { $0.parent == parent }
            for (index, step) in children.enumerated() {
                let isLast = index == children.count - 1
                lines.append(prefix + (isLast ? "`--" : "|--") + step.detail)
                draw(parent: step.id, prefix: prefix + (isLast ? "   " : "|  "))
            }
        }
        draw(parent: 0, prefix: "")
        return lines
    }
}
