import Foundation

/// The peers a scenario compares: GRDB twice (its Codable record and the hand-written one);
/// `reference` is a fixed quantity (M1's snapshot size).
enum Peer: String, CaseIterable, Codable, Sendable {
    case raw, grdb, grdbHandWritten, strata, reference

    var label: String {
        switch self {
        case .raw: return "raw sqlite3"
        case .grdb: return "GRDB Codable"
        case .grdbHandWritten: return "GRDB hand-written"
        case .strata: return "Strata"
        case .reference: return "reference"
        }
    }
}

/// What a scenario must reach: Strata's median divided by a peer's median at most `limit` (for
/// GRDB, the faster of its two records in this run), Strata's median itself at most `limit`
/// (in the scenario's unit), or one of its details (a median over the repetitions) at most
/// `limit`, in `unit` — for scenarios judged on several figures (P4c) or on a ratio that is no
/// ratio of peers' medians (P10's worst query).
enum Target: Sendable {
    case ratio(Peer, Double)
    case fasterGRDB(Double)
    case absolute(Double)
    case detail(String, Double, unit: String)

    func isMet(by result: ScenarioResult) -> Bool? {
        judged(in: result).value.map { $0 <= limit }
    }

    var limit: Double {
        switch self {
        case .ratio(_, let limit), .fasterGRDB(let limit), .absolute(let limit), .detail(_, let limit, _): return limit
        }
    }

    /// The figure this target judges in `result`: its name (a ratio's key, `strata` for Strata's
    /// median, or a detail's name), its value and its unit.
    func judged(in result: ScenarioResult) -> (figure: String, value: Double?, unit: String) {
        switch self {
        case .ratio(let peer, _): return ("strata/\(peer.rawValue)", result.ratio(to: peer), "×")
        case .fasterGRDB: return ("strata/fasterGRDB", result.fasterGRDB.flatMap { result.ratio(to: $0) }, "×")
        case .absolute: return ("strata", result.median(.strata), result.unit)
        case .detail(let name, _, let unit): return (name, result.details[name].flatMap { $0.isNaN ? nil : $0 }, unit)
        }
    }
}

/// Median, minimum and maximum of a list of samples.
struct Statistics: Sendable {
    let median: Double
    let min: Double
    let max: Double

    init?(_ samples: [Double]) {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        min = sorted[0]
        max = sorted[sorted.count - 1]
    }
}

/// The `q`-quantile (0…1) of samples, nearest-rank: the smallest sample with at least `q` of
/// the samples at or below it.
func percentile(_ samples: [Double], _ q: Double) -> Double {
    guard !samples.isEmpty else { return .nan }
    let sorted = samples.sorted()
    let rank = Int((q * Double(sorted.count)).rounded(.up))
    return sorted[min(sorted.count, max(1, rank)) - 1]
}

/// One scenario's measurements and verdict.
struct ScenarioResult: Sendable {
    let id: String
    let title: String
    var unit = "ms"
    /// One sample per repetition and peer.
    var samples: [Peer: [Double]] = [:]
    let targetText: String
    let targets: [Target]
    /// Secondary figures (medians over repetitions), shown in the notes and the JSON.
    var details: [String: Double] = [:]
    var notes: [String] = []

    init(id: String, title: String, unit: String = "ms", target: String, _ targets: [Target]) {
        self.id = id
        self.title = title
        self.unit = unit
        self.targetText = target
        self.targets = targets
    }

    mutating func add(_ peer: Peer, _ value: Double) { samples[peer, default: []].append(value) }
    mutating func add(_ peer: Peer, _ duration: Duration) { add(peer, duration.milliseconds) }

    func statistics(_ peer: Peer) -> Statistics? { samples[peer].flatMap(Statistics.init) }
    func median(_ peer: Peer) -> Double? { statistics(peer)?.median }

    func ratio(to peer: Peer) -> Double? {
        guard let strata = median(.strata), let other = median(peer), other > 0 else { return nil }
        return strata / other
    }

    /// The GRDB record with the lower median in this scenario (Codable or hand-written).
    var fasterGRDB: Peer? {
        [Peer.grdb, .grdbHandWritten].compactMap { peer in median(peer).map { (peer, $0) } }.min { $0.1 < $1.1 }?.0
    }

    /// Ratios printed for every scenario that has the peer; `strata/fasterGRDB` is against the
    /// faster GRDB record.
    var ratios: [(name: String, value: Double)] {
        var ratios = [Peer.raw, .grdb, .grdbHandWritten, .reference].compactMap { peer in
            ratio(to: peer).map { ("strata/\(peer.rawValue)", $0) }
        }
        if let faster = fasterGRDB.flatMap({ ratio(to: $0) }) { ratios.append(("strata/fasterGRDB", faster)) }
        return ratios
    }

    var meetsTarget: Bool { targets.allSatisfy { $0.isMet(by: self) ?? false } }
}

extension Duration {
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
    }
}

/// Everything a run measured, with the conditions it ran in.
struct Report: Sendable {
    let date: Date
    let articleCount: Int
    let repetitions: Int
    let quick: Bool
    let sqliteVersion: String
    let cores: Int
    var scenarios: [ScenarioResult] = []

    // MARK: Text

    func text() -> String {
        var lines: [String] = []
        let formatter = ISO8601DateFormatter()
        lines.append("Strata benchmarks — \(formatter.string(from: date)) — \(articleCount) articles, "
                     + "\(repetitions) repetitions\(quick ? " (quick)" : ""), \(cores) cores, SQLite \(sqliteVersion)")
        lines.append("medians, (min–max) over repetitions; ratios are of medians in this run; Strata/GRDB is "
                     + "against the faster GRDB record (named)")
        lines.append("")
        let header = ["#", "scenario", "raw sqlite3", "GRDB Codable", "GRDB hand-written", "Strata", "Strata/raw",
                      "Strata/GRDB", "target", "met"]
        var rows: [[String]] = [header]
        for scenario in scenarios {
            func cell(_ peer: Peer) -> String {
                guard let stats = scenario.statistics(peer) else { return "—" }
                let unit = scenario.unit == "ms" ? "" : " \(scenario.unit)"
                return "\(format(stats.median))\(unit) (\(format(stats.min))–\(format(stats.max)))"
            }
            let vsRaw = scenario.ratio(to: .raw) ?? scenario.ratio(to: .reference)
            let rawCell = scenario.samples[.reference] != nil ? "snapshot " + cell(.reference) : cell(.raw)
            let vsGRDB = scenario.fasterGRDB.flatMap { faster in
                scenario.ratio(to: faster).map { String(format: "%.2f× ", $0) + (faster == .grdb ? "Codable" : "hand-written") }
            }
            rows.append([scenario.id, scenario.title, rawCell, cell(.grdb), cell(.grdbHandWritten), cell(.strata),
                         vsRaw.map { String(format: "%.2f×", $0) } ?? "—", vsGRDB ?? "—",
                         scenario.targetText, scenario.meetsTarget ? "yes" : "NO"])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for (index, row) in rows.enumerated() {
            lines.append(row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
                .joined(separator: "  "))
            if index == 0 { lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
        lines.append("")
        for scenario in scenarios where !scenario.details.isEmpty || !scenario.notes.isEmpty {
            var parts = scenario.details.sorted { $0.key < $1.key }.map { "\($0.key) \(format($0.value))" }
            parts += scenario.notes
            lines.append("\(scenario.id): " + parts.joined(separator: "; "))
        }
        let met = scenarios.filter(\.meetsTarget).count
        lines.append("")
        lines.append("\(met) of \(scenarios.count) scenarios meet their targets")
        return lines.joined(separator: "\n")
    }

    private func format(_ value: Double) -> String {
        if value.isNaN { return "—" }
        if value >= 100 { return String(format: "%.0f", value) }
        if value >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    // MARK: JSON

    struct JSONScenario: Encodable {
        let id: String
        let title: String
        let unit: String
        let medians: [String: Double]
        let min: [String: Double]
        let max: [String: Double]
        let samples: [String: [Double]]
        let ratios: [String: Double]
        /// The GRDB record `strata/fasterGRDB` and the GRDB targets compare with.
        let fasterGRDB: String?
        let target: String
        let meetsTarget: Bool
        let details: [String: Double]
        let notes: [String]
        /// What each part of the target judges, in the target's order.
        let judged: [JSONJudged]
    }

    struct JSONJudged: Encodable {
        /// A ratio's key (`strata/raw`), `strata` for Strata's median, or a detail's name.
        let figure: String
        let value: Double?
        let limit: Double
        let unit: String
    }

    struct JSONReport: Encodable {
        let date: String
        let articles: Int
        let repetitions: Int
        let quick: Bool
        let sqliteVersion: String
        let cores: Int
        let scenarios: [JSONScenario]
    }

    func json() throws -> String {
        let scenarios = scenarios.map { scenario in
            var medians: [String: Double] = [:], minimums: [String: Double] = [:], maximums: [String: Double] = [:]
            var samples: [String: [Double]] = [:]
            for (peer, values) in scenario.samples {
                guard let stats = Statistics(values) else { continue }
                medians[peer.rawValue] = stats.median
                minimums[peer.rawValue] = stats.min
                maximums[peer.rawValue] = stats.max
                samples[peer.rawValue] = values
            }
            return JSONScenario(id: scenario.id, title: scenario.title, unit: scenario.unit, medians: medians,
                                min: minimums, max: maximums, samples: samples,
                                ratios: Dictionary(uniqueKeysWithValues: scenario.ratios.map { ($0.name, $0.value) }),
                                fasterGRDB: scenario.fasterGRDB?.rawValue,
                                target: scenario.targetText, meetsTarget: scenario.meetsTarget,
                                details: scenario.details.filter { !$0.value.isNaN }, notes: scenario.notes,
                                judged: scenario.targets.map { target in
                                    let (figure, value, unit) = target.judged(in: scenario)
                                    return JSONJudged(figure: figure, value: value, limit: target.limit, unit: unit)
                                })
        }
        let report = JSONReport(date: ISO8601DateFormatter().string(from: date), articles: articleCount,
                                repetitions: repetitions, quick: quick, sqliteVersion: sqliteVersion, cores: cores,
                                scenarios: scenarios)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(report), as: UTF8.self)
    }
}
