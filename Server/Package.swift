// swift-tools-version: 6.0
import PackageDescription

// The sync service (issue 42), in its own package so that building the Strata library never
// pulls a server framework. It shares the wire format with the library through `StrataSyncWire`.
let package = Package(
    name: "StrataServer",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "strata-server", targets: ["StrataServerCLI"]),
    ],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Already in the graph through both of the above; named for the `Service` protocol.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
    ],
    targets: [
        // The service: routes, the push transaction, pulls, long polls, users and tokens.
        .target(
            name: "StrataServer",
            dependencies: [
                .product(name: "StrataSyncWire", package: "Strata"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "StrataServerCLI",
            dependencies: [
                "StrataServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "StrataServerTests",
            dependencies: [
                "StrataServer",
                .product(name: "StrataSyncWire", package: "Strata"),
                // The end-to-end tests run the real engine against in-process services.
                .product(name: "StrataSync", package: "Strata"),
                .product(name: "Strata", package: "Strata"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
