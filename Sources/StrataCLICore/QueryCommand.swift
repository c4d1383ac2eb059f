import ArgumentParser
import Strata

/// `strata query DB ENTITY`: the objects of one entity, filtered, sorted and windowed, as a
/// table or JSON — or SQLite's plan for the query. Opens the file read-only.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Query one entity of a store with a small predicate syntax.",
        discussion: """
            --where syntax (keywords are case-insensitive):
              comparisons  attribute = value, != (or <>), <, <=, >, >=
              lists        attribute IN (1, 2, 3), attribute NOT IN ('a', 'b')
              null         attribute IS NULL, attribute IS NOT NULL (or = null, != null)
              text         attribute BEGINSWITH 'Sw', attribute CONTAINS 'Linux'
                           (both case-sensitive)
              full text    MATCH 'swift concurr*' (all words must occur; word* is a prefix)
              booleans     isRead = false, or a bare attribute: isStarred, NOT isRead
              combine      AND, OR, NOT, parentheses
              values       integers, reals, 'strings' (or "strings"; '' escapes a quote),
                           true, false, null; dates as ISO 8601 strings in UTC or with an
                           offset: '2024-05-01', '2024-05-01T12:00:00Z',
                           '2024-05-01T14:00:00.250+02:00'

            Dates are checked strictly: a month, day, hour, minute or second out of range (2024-02-30, 25:00) is an error, never rolled over.

            --sort takes an attribute, optionally followed by :asc or :desc (or a space and asc or desc); repeat it for more keys. Ties are broken by the primary key.

            Examples:
              strata query reader.sqlite Article --sort published:desc \\
                  --where "isRead = false AND feedID = 7"
              strata query reader.sqlite Article --where "MATCH 'swift actor*'" --json
              strata query reader.sqlite Article --where "feedID = 7" --explain
            """
    )

    @Argument(help: "The store file.", completion: .file())
    var db: String

    @Argument(help: "The entity (its name or table name).")
    var entity: String

    @Option(name: .customLong("where"), help: "A condition (see above).")
    var condition: String?

    @Option(help: "A sort key: ATTRIBUTE[:asc|:desc]. Repeatable.")
    var sort: [String] = []

    @Option(help: "At most this many rows (default 50).")
    var limit: Int?

    @Option(help: "Skip this many rows first.")
    var offset = 0

    @Flag(help: "Every matching row (no limit).")
    var all = false

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @Flag(help: "Print SQLite's query plan instead of running the query.")
    var explain = false

    @OptionGroup var common: CommonOptions

    static let defaultLimit = 50

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more") }
        if offset < 0 { throw ValidationError("--offset must be 0 or more") }
        if all, limit != nil { throw ValidationError("--all and --limit cannot be combined") }
    }

    func run() throws {
        let inspector = try StoreInspector.open(db, logging: common)
        let schema = try inspector.entity(named: entity)
        var filter = Filter.all
        if let condition {
            do {
                filter = try PredicateBinder(schema: schema).bind(try PredicateParser.parse(condition))
            } catch let error as PredicateSyntaxError {
                throw CLIFailure.usage("--where: \(error)")
            }
        }
        let query = InspectionQuery(entity: schema.name, where: filter, sortedBy: try sort.map { try Self.sortKey($0, schema) },
                                    limit: all ? nil : (limit ?? Self.defaultLimit), offset: offset)
        let output = QueryOutput(schema: schema, json: json, console: Console.current)
        if explain {
            let (sql, arguments) = try inspector.sql(for: query)
            output.plan(try inspector.explain(query), sql: sql, arguments: arguments)
            return
        }
        let rows = try inspector.rows(query)
        var matching: Int?
        if !all {
            var unwindowed = query
            unwindowed.limit = nil
            unwindowed.offset = 0
            matching = try inspector.count(unwindowed)
        }
        output.rows(rows, matching: matching ?? rows.count + offset, offset: offset)
    }

    /// A `--sort` value: `ATTRIBUTE`, `ATTRIBUTE:DIRECTION` or `ATTRIBUTE DIRECTION`, the direction
    /// `asc` or `desc` in any case.
    static func sortKey(_ text: String, _ schema: EntitySchema) throws -> SortKey {
        var name = text.trimmingCharacters(in: .whitespaces)
        var ascending = true
        if let separator = name.lastIndex(where: { $0 == ":" || $0 == " " }) {
            let direction = String(name[name.index(after: separator)...])
            switch direction.lowercased() {
            case "asc": ascending = true
            case "desc": ascending = false
            case "": throw CLIFailure.usage("--sort: '\(text)' has no sort direction after the ':' (asc or desc)")
            default:
                throw CLIFailure.usage("--sort: unknown sort direction '\(direction)' in '\(text)' (use asc or desc)")
            }
            name = name[..<separator].trimmingCharacters(in: .whitespaces)
        }
        guard schema.position(of: name) != nil else {
            throw CLIFailure.usage("--sort: unknown attribute '\(name)' of entity \(schema.name) (it has: "
                                   + schema.attributes.map(\.name).joined(separator: ", ") + ")")
        }
        return SortKey(name, ascending: ascending)
    }
}
