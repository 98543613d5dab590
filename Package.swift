// swift-tools-version:6.0
import PackageDescription

/// Tern: migrate SQLite object stores (Core Data's on-disk layout) between model versions.
///
/// The layering is strict: only `TernSQLite` imports `CSQLite`, only `TernLoop` imports `CLibUV`,
/// only `TernInflate` imports `CZlib`, only `TernDigest` imports `CCrypto`, and everything above them
/// speaks Swift.
let package = Package(
    name: "Tern",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Tern", targets: ["Tern"]),
        .library(name: "TernSQLite", targets: ["TernSQLite"]),
        .library(name: "TernLoop", targets: ["TernLoop"]),
        .library(name: "TernExamples", targets: ["TernExamples"]),
        .library(name: "TernGenerate", targets: ["TernGenerate"]),
        .library(name: "TernCommands", targets: ["TernCommands"]),
        .library(name: "TernFleet", targets: ["TernFleet"]),
        .library(name: "TernBench", targets: ["TernBench"]),
        .library(name: "TernTesting", targets: ["TernTesting"]),
        .executable(name: "tern", targets: ["TernCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // `swift package generate-documentation`: DocC for the public products (never built by `swift build`).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // C libraries, found with pkg-config.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CLibUV",
            pkgConfig: "libuv",
            providers: [.apt(["libuv1-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),

        // The thin layers over C.
        .target(name: "TernSQLite", dependencies: ["CSQLite"]),
        .target(name: "TernLoop", dependencies: ["CLibUV"]),
        .target(name: "TernInflate", dependencies: ["CZlib"]),
        .target(name: "TernDigest", dependencies: ["CCrypto"]),

        // The layers of the library, each depending only on those below it (the compiler keeps
        // them apart; see each target's README.md).
        // Models: entities, versions, Core Data's version hashes, and the files models come in.
        .target(
            name: "TernModel",
            dependencies: ["TernSQLite", "TernInflate", "TernDigest", .product(name: "Yams", package: "Yams")],
            exclude: ["README.md"]
        ),
        // Stores: Core Data's layout (the one owner of its names), metadata, recognition of the
        // version that wrote a store, and reading and writing objects.
        .target(
            name: "TernStore",
            dependencies: ["TernModel", "TernSQLite", "TernLoop", "TernInflate", "TernDigest"],
            exclude: ["README.md"]
        ),
        // Mappings: NSExpression/NSPredicate value expressions compiled to SQL, mapping models
        // and their files, inferred (lightweight) mappings.
        .target(
            name: "TernMapping",
            dependencies: ["TernModel", "TernStore", "TernSQLite", .product(name: "Yams", package: "Yams")],
            exclude: ["README.md"]
        ),
        // The engine, in three layers. Planning: what a run will do, decided once, as values
        // (the plan, its steps, every per-mapping decision) and the policy API they name.
        .target(
            name: "TernPlanning",
            dependencies: ["TernModel", "TernStore", "TernMapping", "TernSQLite", "TernDigest", .product(name: "Logging", package: "swift-log")],
            exclude: ["README.md"]
        ),
        // Durability: what outlives a process — the run's record, each step's workspace and
        // checkpoints, the store's lock and files, and the errors that say how to go on.
        .target(
            name: "TernDurability",
            dependencies: ["TernPlanning", "TernModel", "TernStore", "TernMapping", "TernSQLite", "TernLoop", "TernDigest"],
            exclude: ["README.md"]
        ),
        // Execution: one step run — batches through the three stages on libuv workers,
        // verification, progress.
        .target(
            name: "TernExecution",
            dependencies: [
                "TernPlanning", "TernDurability", "TernModel", "TernStore", "TernMapping", "TernSQLite", "TernLoop",
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["README.md"]
        ),
        // The library other Swift programs import: `StoreMigration` runs the steps of a plan with
        // its record and delivers the store; it re-exports every layer.
        .target(
            name: "Tern",
            dependencies: [
                "TernPlanning",
                "TernDurability",
                "TernExecution",
                "TernModel",
                "TernStore",
                "TernMapping",
                "TernSQLite",
                "TernLoop",
                .product(name: "Logging", package: "swift-log"),
                "TernDigest",
            ],
            exclude: ["README.md"]
        ),

        // Synthetic stores for any model version (`tern generate`, the benchmarks, the tests).
        .target(name: "TernGenerate", dependencies: ["Tern", "TernSQLite"]),

        // The example policies of the configs under configs/ (the book's, the benchmark's): what
        // `tern` registers by default; a library user registers only what they choose.
        .target(name: "TernExamples", dependencies: ["Tern", "TernSQLite"]),

        // For users' tests of their own policies and mappings: stores from literal objects,
        // migrated and read back (as swift-argument-parser ships ArgumentParserTestHelpers).
        .target(name: "TernTesting", dependencies: ["Tern", "TernGenerate", .product(name: "Logging", package: "swift-log")]),

        // The `tern` command line, as a library so packages with their own policies can run it.
        .target(
            name: "TernCommands",
            dependencies: [
                "Tern",
                "TernExamples",
                "TernGenerate",
                "TernSQLite",
                "TernLoop",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                "TernDigest",
            ]
        ),
        // Fleets: thousands of stores migrated by a job engine's workers, each store leased
        // (`tern fleet`); a product of its own, added to a command line by `TernCommandLine.main`.
        .target(
            name: "TernFleet",
            dependencies: [
                "Tern", "TernCommands", "TernLoop", "TernSQLite", "TernDigest",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The benchmarks (`tern bench`): Tern beside the hand-written SQL script and the naive
        // program, measured in one run; a product of its own.
        .target(
            name: "TernBench",
            dependencies: [
                "Tern", "TernCommands", "TernGenerate", "TernExamples", "TernLoop", "TernSQLite",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The `tern` executable: the command line with the built-in policies, fleets and benchmarks.
        .executableTarget(name: "TernCLI", dependencies: ["TernCommands", "TernFleet", "TernBench"]),

        .testTarget(name: "TernSQLiteTests", dependencies: ["TernSQLite", "TernLoop"]),
        .testTarget(name: "TernLoopTests", dependencies: ["TernLoop"]),
        .testTarget(name: "TernInflateTests", dependencies: ["TernInflate"]),
        .testTarget(name: "TernDigestTests", dependencies: ["TernDigest"]),
        .testTarget(name: "TernTests", dependencies: ["Tern", "TernPlanning", "TernDurability", "TernExecution", "TernExamples", "TernGenerate", "TernLoop", "TernSQLite", "TernTesting", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "TernCLITests", dependencies: ["TernCLI", "TernCommands", "TernFleet", "TernBench", "TernSQLite", "TernLoop"]),
    ],
    swiftLanguageModes: [.v6]
)
