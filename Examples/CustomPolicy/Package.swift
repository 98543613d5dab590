// swift-tools-version:6.0
import Foundation
import PackageDescription

/// How to add your own entity migration policies to Tern: a package that depends on Tern's
/// libraries, registers its policies, and runs Tern's command line with them.
/// Build and run: `swift run bookstore-tern migrate STORE --model ../../configs/bookstore`;
/// test the policy: `swift test`.
let tern = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "CustomPolicy",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "../..")],
    targets: [
        // The policy, as a library its tests and the executable share.
        .target(name: "CatalogueAuthorPolicy", dependencies: [.product(name: "Tern", package: tern)]),
        .executableTarget(
            name: "bookstore-tern",
            dependencies: [
                "CatalogueAuthorPolicy",
                .product(name: "Tern", package: tern),
                .product(name: "TernExamples", package: tern),
                .product(name: "TernCommands", package: tern),
            ]
        ),
        // Its test, written with Tern's test kit.
        .testTarget(
            name: "CatalogueAuthorPolicyTests",
            dependencies: ["CatalogueAuthorPolicy", .product(name: "Tern", package: tern), .product(name: "TernTesting", package: tern)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
