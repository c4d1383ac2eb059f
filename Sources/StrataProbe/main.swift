import Foundation

// A helper process for the reliability tests: each mode does real work on a store and reports
// progress on stdout, one unbuffered line at a time, so that the test can kill it at any moment
// and know exactly what was acknowledged.
let arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
switch arguments.first {
case "two-process-writer": status = await runTwoProcessWriter(arguments: Array(arguments.dropFirst()))
case "import-loop": status = await runImportLoop(arguments: Array(arguments.dropFirst()))
case "snapshot-crash": status = await runSnapshotCrash(arguments: Array(arguments.dropFirst()))
case "reentrancy": status = await runReentrancy(arguments: Array(arguments.dropFirst()))
case "migration-kill": status = await runMigrationKill(arguments: Array(arguments.dropFirst()))
case "outside-writer": status = await runOutsideWriter(arguments: Array(arguments.dropFirst()))
default:
    FileHandle.standardError.write(Data("usage: StrataProbe two-process-writer|import-loop|snapshot-crash|reentrancy|migration-kill|outside-writer …\n".utf8))
    status = 2
}
exit(status)
