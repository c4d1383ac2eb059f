import Foundation

/// Locale-independent formatting, so output is the same on every machine.
enum Format {
    /// `100000` → `100,000`.
    static func count<I: BinaryInteger>(_ value: I) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (index, character) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(character)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    /// A count and its noun, singular for one: `1 article`, `100,000 articles`, `1 entity`.
    /// - Parameter plural: the plural when it is not the noun with an `s` (`entities`).
    static func count<I: BinaryInteger>(_ value: I, _ noun: String, plural: String? = nil) -> String {
        count(value) + " " + (value == 1 ? noun : plural ?? noun + "s")
    }

    /// Binary units: `512 B`, `12.3 KiB`, `4.56 MiB`.
    static func bytes<I: BinaryInteger>(_ value: I) -> String {
        let bytes = Double(Int64(value))
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var scaled = bytes
        var unit = 0
        while abs(scaled) >= 1024, unit < units.count - 1 {
            scaled /= 1024
            unit += 1
        }
        if unit == 0 { return "\(Int64(value)) B" }
        return decimal(scaled, digits: abs(scaled) < 10 ? 2 : 1) + " " + units[unit]
    }

    /// `0.0123` seconds → `12.3 ms`; `1.5` → `1.50 s`.
    static func duration(_ duration: Duration) -> String { seconds(duration.seconds) }

    static func seconds(_ seconds: Double) -> String {
        if seconds < 0.001 { return decimal(seconds * 1_000_000, digits: 0) + " µs" }
        if seconds < 1 { return decimal(seconds * 1000, digits: seconds < 0.01 ? 2 : 1) + " ms" }
        return decimal(seconds, digits: 2) + " s"
    }

    /// A fixed number of decimals, with a dot.
    static func decimal(_ value: Double, digits: Int) -> String {
        String(format: "%.\(digits)f", locale: Locale(identifier: "en_US_POSIX"), value)
    }

    /// `3.456` → `3.5×`.
    static func ratio(_ value: Double) -> String { decimal(value, digits: 1) + "×" }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
