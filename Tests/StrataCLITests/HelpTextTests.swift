import ArgumentParser
import Foundation
@testable import StrataCLICore
import StrataTestSupport
import Testing

/// `--version`, and help text that ArgumentParser wraps to the terminal's width.
@Suite struct HelpTextTests {
    @Test func versionIsPrinted() async {
        let result = await runCLI(["--version"])
        #expect(result.code == ExitStatus.ok)
        #expect(result.output == StrataVersion.current + "\n")
        #expect(result.error.isEmpty)
    }

    /// Every command, the hidden ones aside, with its subcommands.
    static func commands(_ command: any ParsableCommand.Type = StrataCommand.self) -> [any ParsableCommand.Type] {
        [command] + command.configuration.subcommands.filter { $0.configuration.shouldDisplay }.flatMap { commands($0) }
    }

    /// Every help string — abstracts, discussions, options' help — is written one line per
    /// paragraph: two consecutive unindented lines would be a paragraph broken by hand, which
    /// ArgumentParser re-wraps raggedly. Indented lines (examples, tables) are broken by hand and
    /// are at most 79 columns, so ArgumentParser never re-wraps them on an 80-column terminal (it
    /// fills at most `columns - 1`).
    @Test func helpStringsAreParagraphs() async throws {
        let dump = await runCLI(["--experimental-dump-help"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.output.utf8)) as? [String: Any])
        var texts: [(String, String)] = []
        func collect(_ command: [String: Any]) {
            let name = command["commandName"] as? String ?? "?"
            for key in ["abstract", "discussion"] { if let text = command[key] as? String { texts.append((name, text)) } }
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                let label = (argument["valueName"] as? String).map { "\(name) <\($0)>" } ?? name
                for key in ["abstract", "discussion"] { if let text = argument[key] as? String { texts.append((label, text)) } }
            }
            for subcommand in command["subcommands"] as? [[String: Any]] ?? [] { collect(subcommand) }
        }
        collect(try #require(root["command"] as? [String: Any]))
        #expect(texts.count > 40, "the dump holds every command's and option's help")
        for (place, text) in texts {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            for (line, next) in zip(lines, lines.dropFirst())
            where !line.isEmpty && !next.isEmpty && line.first != " " && next.first != " " {
                Issue.record("\(place): a paragraph is broken by hand before \"\(next.prefix(40))\"")
            }
            for line in lines where line.first == " " && line.count > 79 {
                Issue.record("\(place): an indented line of \(line.count) columns would be re-wrapped: \"\(line)\"")
            }
        }
    }

    /// Rendered at 80, 100 and 120 columns, the overview and discussion (the text before USAGE)
    /// fill their lines: a line followed by a continuation could not have held the continuation's
    /// first word (ArgumentParser fills at most `columns - 1`), and no indented line is wrapped.
    @Test(arguments: [80, 100, 120])
    func helpFillsTheTerminalWidth(columns: Int) {
        for command in Self.commands() {
            let name = command.configuration.commandName ?? "?"
            let help = StrataCommand.helpMessage(for: command, columns: columns)
            let overview = help.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.hasPrefix("USAGE:") }
            #expect(overview.count > 1, "\(name) has an overview")
            for line in overview where line.count >= columns {
                Issue.record("\(name) at \(columns) columns: a line of \(line.count): \"\(line)\"")
            }
            for (line, next) in zip(overview, overview.dropFirst()) where !line.isEmpty && !next.isEmpty && next.first != " " {
                let word = next.prefix { $0 != " " }
                if line.first == " " || line.count + 1 + word.count <= columns - 1 {
                    Issue.record("\(name) at \(columns) columns: \"\(line)\" is followed by \"\(next)\"")
                }
            }
        }
    }
}
