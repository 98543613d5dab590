// swift-tools-version:6.0
import Foundation
import PackageDescription

/// How to add your own entity migration policies to Tern: a package that depends on Tern's
/// libraries, registers its policies, and runs Tern's command line with them.
/// Build and run: `swift run bookstore-tern migrate STORE --model ../../configs/bookstore`.
let tern = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "CustomPolicy",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(
            name: "bookstore-tern",
            dependencies: [
                .product(name: "Tern", package: tern),
                .product(name: "TernExamples", package: tern),
                .product(name: "TernCommands", package: tern),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
