// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Strata",
    // What the code needs: `@Observable` (LiveQuery) is macOS 14 / iOS 17 / tvOS 17 / watchOS 10.
    // Newer APIs are used behind `if #available` (see Design.md, "Platforms").
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        .executable(name: "strata", targets: ["StrataCLI"]),
        // The CLI's logic, as a library so that the fuzz package (Fuzz/) can reach its parser.
        .library(name: "StrataCLICore", targets: ["StrataCLICore"]),
        // The sync protocol's messages and rules, shared by the sync engine and the sync service
        // (Server/): Foundation only.
        .library(name: "StrataSyncWire", targets: ["StrataSyncWire"]),
        // The sync engine: a store syncing with a server through a transport (HTTP by default).
        .library(name: "StrataSync", targets: ["StrataSync"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // `swift package generate-documentation --target Strata` (the docs stage of .ci/run).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite3"])]
        ),
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        .target(
            name: "Strata",
            dependencies: [
                "CSQLite",
                "CLZ4",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "StrataSyncWire"),
        // Strata, the protocol and Foundation only (FoundationNetworking's URLSession on Linux).
        .target(
            name: "StrataSync",
            dependencies: ["Strata", "StrataSyncWire"]
        ),
        .target(
            name: "StrataCLICore",
            dependencies: [
                "Strata",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "StrataCLI",
            dependencies: ["StrataCLICore"]
        ),
        // Spawned and killed by the reliability tests (crash loops, two processes on one file).
        .executableTarget(
            name: "StrataProbe",
            dependencies: ["Strata"]
        ),
        .target(
            name: "CFaultVFS",
            path: "Tests/CFaultVFS",
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        // What both test targets share: temporary directories, seeded randomness, bounded waits.
        .target(
            name: "StrataTestSupport",
            path: "Tests/StrataTestSupport"
        ),
        .testTarget(
            name: "StrataTests",
            dependencies: ["Strata", "StrataTestSupport", "CFaultVFS", "StrataProbe",
                           .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "StrataSyncWireTests",
            dependencies: ["StrataSyncWire", "StrataTestSupport"]
        ),
        // The sync engine against an in-process double of the server (no server, no network).
        .testTarget(
            name: "StrataSyncTests",
            dependencies: ["StrataSync", "StrataSyncWire", "Strata", "StrataTestSupport"]
        ),
        .testTarget(
            name: "StrataCLITests",
            // The executable too, so that `swift test` builds the `strata` binary the end-to-end test runs.
            dependencies: ["StrataCLICore", "Strata", "StrataCLI", "StrataTestSupport"],
            exclude: ["Golden"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
