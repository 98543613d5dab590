// swift-tools-version:6.0
import Foundation
import PackageDescription

/// libFuzzer harnesses for Tern's parsers and file readers, kept out of the main package because they only link
/// with `-sanitize=fuzzer`. Run with `scripts/fuzz` from the repository root.
let tern = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "TernFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "..")],
    targets: [
        // libFuzzer's entry, shared by the fuzzers.
        .target(name: "FuzzDriver"),
        .executableTarget(name: "ExpressionFuzzer", dependencies: ["FuzzDriver", .product(name: "Tern", package: tern)]),
        .executableTarget(name: "FileFormatFuzzer", dependencies: ["FuzzDriver", .product(name: "Tern", package: tern)]),
    ],
    swiftLanguageModes: [.v6]
)
