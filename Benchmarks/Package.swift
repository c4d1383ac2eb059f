// swift-tools-version: 6.0
// Strata's benchmarks: a package of their own, so that the library's build never pulls the peers
// it is measured against (GRDB, and SQLite and LZ4 used directly).
import Foundation
import PackageDescription

// A path dependency's identity is the name of its directory, which depends on where the
// repository was cloned: derive it rather than assume "strata".
let strataIdentity = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v14)],  // Strata's own minimum (Package.swift)
    dependencies: [
        .package(path: "../"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLiteBench",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite3"])]
        ),
        .systemLibrary(
            name: "CLZ4Bench",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        // Callgrind's client requests (valgrind/callgrind.h, if installed) for
        // Scripts/instructions.sh: header only, nothing to link.
        .systemLibrary(name: "CCallgrindBench"),
        .executableTarget(
            name: "StrataBenchmarks",
            dependencies: [
                "CSQLiteBench",
                "CLZ4Bench",
                "CCallgrindBench",
                .product(name: "Strata", package: strataIdentity),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
