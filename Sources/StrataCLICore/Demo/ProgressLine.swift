/// Shows progress: a bar redrawn in place on a terminal (at most every 50 ms), or a plain line
/// at each quarter when output goes to a file or a CI log. Silent for `--json`.
@MainActor
final class ProgressLine {
    private let console: Console
    private let total: Int
    private let unit: String
    private let isEnabled: Bool
    private var lastDraw: ContinuousClock.Instant?
    private var nextQuarter = 1
    private var drawn = false

    init(console: Console, total: Int, unit: String, enabled: Bool) {
        self.console = console
        self.total = max(1, total)
        self.unit = unit
        self.isEnabled = enabled
    }

    func update(_ done: Int, _ detail: @autoclosure () -> String) {
        guard isEnabled else { return }
        if console.isTerminal {
            let now = ContinuousClock.now
            if let lastDraw, now - lastDraw < .milliseconds(50) { return }
            lastDraw = now
            console.write("\r\u{1B}[2K" + line(done, detail()))
            drawn = true
        } else {
            while nextQuarter <= 4, done * 4 >= total * nextQuarter {
                console.line(line(total * nextQuarter / 4, detail()))
                nextQuarter += 1
            }
        }
    }

    func finish(_ done: Int, _ detail: String) {
        guard isEnabled else { return }
        if console.isTerminal {
            console.write("\r\u{1B}[2K" + line(done, detail) + "\n")
        } else {
            update(done, detail)
        }
    }

    private func line(_ done: Int, _ detail: String) -> String {
        let width = 30
        let filled = min(width, done * width / total)
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let percent = String(min(100, done * 100 / total)).leftPadded(to: 3)
        return "   \(bar) \(percent)%  \(Format.count(done))/\(Format.count(total)) \(unit)  \(detail)"
    }
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
