import Foundation
import StrataCLICore

exit(await StrataCLI.run(Array(CommandLine.arguments.dropFirst())))
