import Foundation

/// The dates `--where` accepts, parsed strictly: `2024-05-01` (midnight UTC) or
/// `2024-05-01T12:00:00Z`, with optional fractional seconds (`12:00:00.250Z`) and a UTC offset
/// instead of `Z` (`14:00:00+02:00`).
///
/// Every component is checked against its range — month 01–12, the month's real length (leap
/// years included), hour 00–23, minute and second 00–59 — and a value out of range is refused,
/// never rolled into the next day or month the way a lenient parser would. The date is computed
/// from its fields (proleptic Gregorian calendar), independently of the machine's locale and zone.
enum ISO8601Date {
    /// Why a text is not a date, in words: "hour 25 is out of range (00–23)".
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let example = "2024-05-01 or 2024-05-01T12:00:00Z"

    static func parse(_ text: String) throws(Failure) -> Date {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.digits(4), scanner.skip("-"), let month = scanner.digits(2), scanner.skip("-"),
              let day = scanner.digits(2) else { throw malformed(text) }
        try check("month", month, 1...12, text)
        let length = daysInMonth(month, year: year)
        guard (1...length).contains(day) else {
            throw Failure(description: "'\(text)' is not a valid date: day \(two(day)) is out of range "
                          + "(\(monthNames[month - 1]) \(year) has \(length) days)")
        }
        var seconds = Double(daysSince1970(year: year, month: month, day: day)) * 86_400
        if scanner.isAtEnd { return Date(timeIntervalSince1970: seconds) }

        guard scanner.skip("T"), let hour = scanner.digits(2), scanner.skip(":"), let minute = scanner.digits(2),
              scanner.skip(":"), let second = scanner.digits(2) else { throw malformed(text) }
        try check("hour", hour, 0...23, text)
        try check("minute", minute, 0...59, text)
        try check("second", second, 0...59, text)
        seconds += Double(hour * 3_600 + minute * 60 + second)
        if scanner.skip(".") {
            guard let fraction = scanner.fraction() else { throw malformed(text) }
            seconds += fraction
        }
        if scanner.skip("Z") {
            // UTC.
        } else if let sign = scanner.sign() {
            guard let hours = scanner.digits(2), scanner.skip(":"), let minutes = scanner.digits(2) else {
                throw malformed(text)
            }
            try check("offset hour", hours, 0...23, text)
            try check("offset minute", minutes, 0...59, text)
            seconds -= Double(sign * (hours * 3_600 + minutes * 60))
        } else if scanner.isAtEnd {
            throw Failure(description: "'\(text)' has no time zone: end it with Z (UTC) or an offset such as +02:00")
        } else {
            throw malformed(text)
        }
        guard scanner.isAtEnd else { throw malformed(text) }
        return Date(timeIntervalSince1970: seconds)
    }

    private static func malformed(_ text: String) -> Failure {
        Failure(description: "'\(text)' is not an ISO 8601 date (\(example))")
    }

    private static func check(_ name: String, _ value: Int, _ range: ClosedRange<Int>, _ text: String) throws(Failure) {
        guard range.contains(value) else {
            throw Failure(description: "'\(text)' is not a valid date: \(name) \(two(value)) is out of range "
                          + "(\(two(range.lowerBound))–\(two(range.upperBound)))")
        }
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                             "October", "November", "December"]

    static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the date (negative before it): Howard Hinnant's `days_from_civil`.
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Reads ASCII digits and punctuation from the text's UTF-8 bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { position == bytes.count }

        mutating func skip(_ character: Character) -> Bool {
            guard position < bytes.count, bytes[position] == character.asciiValue else { return false }
            position += 1
            return true
        }

        /// Exactly `count` digits, as a number.
        mutating func digits(_ count: Int) -> Int? {
            guard position + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[position..<position + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            position += count
            return value
        }

        /// One or more digits after a decimal point, as a fraction of a second.
        mutating func fraction() -> Double? {
            let start = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
            guard position > start else { return nil }
            return Double("0." + String(decoding: bytes[start..<position], as: UTF8.self))
        }

        /// `+` as 1, `-` as -1.
        mutating func sign() -> Int? {
            if skip("+") { return 1 }
            if skip("-") { return -1 }
            return nil
        }
    }
}
