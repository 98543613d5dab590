// swift-tools-version:6.1
import Foundation
import PackageDescription

/// A path dependency is named after its directory, which is whatever the checkout was cloned as.
let tern = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

/// Tern's micro-benchmarks: a package of its own, so the main package never depends on the
/// benchmark harness. Run from this directory: `swift package benchmark`.
let package = Package(
    name: "TernBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "SQLiteLayer",
            dependencies: [
                .product(name: "TernSQLite", package: tern),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/SQLiteLayer",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "Engine",
            dependencies: [
                .product(name: "Tern", package: tern),
                .product(name: "TernGenerate", package: tern),
                .product(name: "TernSQLite", package: tern),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/Engine",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
