import Foundation

/// Runs the demo's executable again in a fresh process and reads the one JSON line it prints.
enum Relauncher {
    /// The running executable (`/proc/self/exe` on Linux).
    static var currentExecutable: String {
        #if os(Linux)
        return (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        #else
        return Bundle.main.executablePath ?? CommandLine.arguments[0]
        #endif
    }

    /// Launches `executable` with `arguments`, waits for it, and decodes its standard output.
    /// - Returns: the result and the wall time from launch to exit.
    static func launch(_ executable: String, _ arguments: [String]) async throws -> (LaunchResult, Duration) {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try run(executable, arguments) })
            }
        }
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> (LaunchResult, Duration) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        let start = ContinuousClock.now
        do {
            try process.run()
        } catch {
            throw CLIFailure(exitCode: ExitStatus.failure, "cannot relaunch \(executable): \(error.localizedDescription)")
        }
        let data = try output.fileHandleForReading.readToEnd() ?? Data()
        process.waitUntilExit()
        let elapsed = ContinuousClock.now - start
        guard process.terminationStatus == 0 else {
            throw CLIFailure(exitCode: ExitStatus.failure, "the relaunched process (\(arguments.joined(separator: " "))) "
                             + "exited with status \(process.terminationStatus)")
        }
        do {
            return (try JSONDecoder().decode(LaunchResult.self, from: data), elapsed)
        } catch {
            throw CLIFailure(exitCode: ExitStatus.failure, "the relaunched process printed no result: "
                             + String(decoding: data.prefix(200), as: UTF8.self))
        }
    }
}
