/// Everything the demo measured: one record per step (its time and the counts after it), the
/// relaunches (per mode, the median launch and every run's time to data), and the checks.
/// Printed as the final table, or whole as `--json`.
struct DemoReport {
    struct Step {
        var number: Int
        var name: String
        var seconds: Double
        var feeds: Int
        var articles: Int
        var unread: Int
        var starred: Int
        /// The step's own numbers (rows written, matches found, bytes…), by name, in order.
        var details: [(String, JSONValue)] = []
    }

    var steps: [Step] = []
    var launches: [(String, LaunchResult, Double, [Double])] = []
    var conflict: [(String, JSONValue)] = []
    var snapshot: [(String, JSONValue)] = []
    var checks: [(String, Bool)] = []
    var totalSeconds = 0.0

    var passed: Bool { checks.allSatisfy(\.1) }

    func tableLines() -> [String] {
        var table = TextTable(["STEP", "WHAT", "TIME", "FEEDS", "ARTICLES", "UNREAD", "STARRED"], rightAligned: [2, 3, 4, 5, 6])
        for step in steps {
            table.add([String(step.number), step.name, Format.seconds(step.seconds), Format.count(step.feeds),
                       Format.count(step.articles), Format.count(step.unread), Format.count(step.starred)])
        }
        return table.lines(indent: "   ")
    }

    func json(options: DemoOptions) -> JSONValue {
        let final = steps.last
        return .object([
            ("store", .string(options.paths.store)),
            ("snapshotFile", .string(options.paths.snapshot)),
            ("seed", .integer(Int64(bitPattern: options.seed))),
            ("feeds", .int(options.feeds)),
            ("articles", .int(options.articles)),
            ("steps", .array(steps.map { step in
                .object([
                    ("step", .int(step.number)), ("name", .string(step.name)), ("seconds", .number(step.seconds)),
                    ("feeds", .int(step.feeds)), ("articles", .int(step.articles)), ("unread", .int(step.unread)),
                    ("starred", .int(step.starred)), ("details", .object(step.details)),
                ])
            })),
            ("conflict", .object(conflict)),
            ("snapshot", .object(snapshot)),
            ("launches", .object(launches.map { name, result, wall, runs in
                (name, .object([
                    ("outcome", .string(result.outcome)), ("usedSnapshot", .bool(result.usedSnapshot)),
                    ("timeToDataSeconds", .number(result.timeToDataSeconds)),
                    ("timeToFirstScreenSeconds", .number(result.timeToFirstScreenSeconds)),
                    ("firstScreenEarly", .bool(result.firstScreenEarly)), ("processSeconds", .number(wall)),
                    ("feeds", .int(result.feeds)), ("articles", .int(result.articles)), ("unread", .int(result.unread)),
                    ("starred", .int(result.starred)), ("digest", .string(result.digest)),
                    ("runsTimeToDataSeconds", .array(runs.map { .number($0) })),
                ]))
            })),
            ("checks", .object(checks.map { ($0.0, .bool($0.1)) })),
            ("passed", .bool(passed)),
            ("final", .object([
                ("feeds", .int(final?.feeds ?? 0)), ("articles", .int(final?.articles ?? 0)),
                ("unread", .int(final?.unread ?? 0)), ("starred", .int(final?.starred ?? 0)),
            ])),
            ("totalSeconds", .number(totalSeconds)),
        ])
    }
}
