// swift-tools-version: 6.0
// Fuzz targets for Strata, kept out of the main package so that the fuzzer flags never reach it:
//   swift build --package-path Fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
//   Fuzz/.build/debug/FuzzSnapshot Fuzz/Corpus/snapshot -max_total_time=60
//   Fuzz/.build/debug/FuzzPredicate Fuzz/Corpus/predicate -max_total_time=60
//   Fuzz/.build/debug/FuzzPush Fuzz/Corpus/push -max_total_time=60
// The saved corpus is replayed by the normal test run (Tests/StrataTests/FuzzCorpusTests.swift).
import Foundation
import PackageDescription

// A path dependency's identity is its directory's name, which depends on where the repository
// was cloned: derive it.
let strataIdentity = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "StrataFuzz",
    platforms: [.macOS(.v14)],  // Strata's own minimum (Package.swift)
    dependencies: [.package(path: "../")],
    targets: [
        // libFuzzer's driver, called from each target's entry point.
        .target(name: "FuzzDriver"),
        .executableTarget(name: "FuzzSnapshot", dependencies: ["FuzzDriver", .product(name: "Strata", package: strataIdentity)]),
        .executableTarget(name: "FuzzPredicate", dependencies: ["FuzzDriver", .product(name: "StrataCLICore", package: strataIdentity)]),
        .executableTarget(name: "FuzzPush", dependencies: ["FuzzDriver", .product(name: "StrataSyncWire", package: strataIdentity)]),
    ],
    swiftLanguageModes: [.v6]
)
