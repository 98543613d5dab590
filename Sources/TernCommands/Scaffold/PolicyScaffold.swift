import Foundation
import Tern

/// `tern policy scaffold`: the Swift package a team writes its app's `NSEntityMigrationPolicy`
/// subclasses into. One policy type per class the mapping models name, each hook doing what
/// Core Data's default policy does and its doc comment saying what the mapping models ask of
/// the class; a registry under the names the mappings give; an executable running Tern's command
/// line with them; one `TernTesting` test per policy that migrates generated objects through its
/// mapping. It builds and its tests pass as generated: the port starts green.
struct PolicyScaffold {
    /// One entity mapping that names a policy class, and where it comes from.
    struct Use {
        let file: String
        let source: String
        let destination: String
        let mapping: EntityMapping
        /// The source entity's stored attributes no expression of the mapping reads: what the
        /// app's class may have read in code, a porter's first clue.
        var unread: [String] = []
        /// The destination entities no entity mapping of the whole mapping model fills: objects
        /// the app's class may have made itself.
        var unfilled: [String] = []
    }

    /// A class the mappings name: as they spell it, the Swift type standing for it, and its uses.
    struct PolicyClass {
        let name: String
        let typeName: String
        var uses: [Use]
        /// Other spellings of the same class (`MyApp.Policy` and `Policy`), registered too.
        var otherNames: Set<String> = []
    }

    let packageName: String
    let modelPath: String
    let ternPath: String
    /// Where the package is written: the paths it holds are relative to it, so it builds and
    /// tests wherever the three folders stand beside each other.
    let packageDirectory: String
    let model: VersionedModel
    let classes: [PolicyClass]

    /// The library target holding the policies and their registry.
    var libraryName: String { packageName }
    /// The executable running `tern` with the policies.
    var executableName: String { packageName.lowercased() + "-tern" }

    /// Reads the mapping models and collects the policy classes they name, in the order met.
    /// Throws when none names one (there is nothing to port) or when two classes would become
    /// one Swift type.
    init(
        model: VersionedModel, modelPath: String, mappingFiles: [String], packageName: String, ternPath: String, packageDirectory: String
    ) throws {
        guard Self.isIdentifier(packageName), !Self.reserved.contains(packageName), !Self.keywords.contains(packageName),
            packageName.contains(where: { $0 != "_" })
        else {
            throw TernError(
                .badInput,
                "the package name \(packageName) cannot name a Swift module (an ASCII identifier that is no keyword and not "
                    + "Tern's or the standard library's own name): choose one with --name")
        }
        // Every class name, as spelled, with its uses, in the order met.
        var spelled: [(name: String, uses: [Use])] = []
        for file in mappingFiles {
            let mapping = try MappingLoader.read(file, in: model)
            // Checked as a migration checks it: a scaffold of a mapping `plan` refuses would not pass its own tests.
            if let source = model.version(named: mapping.sourceVersion ?? ""), let destination = model.version(named: mapping.destinationVersion ?? "") {
                _ = try mapping.validate(source: source, destination: destination, file: file)
            }
            for entityMapping in mapping.entityMappings {
                guard let name = entityMapping.policy else { continue }
                var use = Use(file: file, source: mapping.sourceVersion ?? "?", destination: mapping.destinationVersion ?? "?", mapping: entityMapping)
                use.unread = Self.unread(by: entityMapping, in: model.version(named: use.source))
                use.unfilled =
                    model.version(named: use.destination).map { destination in
                        let filled = Set(mapping.entityMappings.compactMap(\.destinationEntity))
                        return destination.entities.filter { !$0.isAbstract && !filled.contains($0.name) }.map(\.name).sorted()
                    } ?? []
                if let index = spelled.firstIndex(where: { $0.name == name }) {
                    spelled[index].uses.append(use)
                } else {
                    spelled.append((name, [use]))
                }
            }
        }
        // `MyApp.Policy` and `Policy` are one class (the registry finds a name by its last part)
        // unless two modules have a class of that name: `A.Foo` and `B.Foo` are two types.
        var modules: [String: Set<String>] = [:]
        for (name, _) in spelled where name.contains(".") {
            modules[Self.lastPart(name), default: []].insert(String(name.dropLast(Self.lastPart(name).count + 1)))
        }
        var classes: [PolicyClass] = []
        for (name, uses) in spelled {
            let last = Self.lastPart(name)
            let qualifiedApart = (modules[last]?.count ?? 0) > 1 && name.contains(".")
            let typeName = Self.typeName(for: qualifiedApart ? name.replacingOccurrences(of: ".", with: "_") : last)
            if !qualifiedApart, let index = classes.firstIndex(where: { $0.typeName == typeName && Self.lastPart($0.name) == last }) {
                classes[index].uses += uses
                classes[index].otherNames.insert(name)
                continue
            }
            // File and test names must differ on a disk that ignores case.
            if let other = classes.first(where: { $0.typeName.lowercased() == typeName.lowercased() }) {
                throw TernError(
                    .badInput,
                    "the policy classes \(other.name) and \(name) would both be the Swift type \(typeName) (or differ from it only in case): "
                        + "scaffold their mapping models apart (--mapping)", path: uses[0].file)
            }
            classes.append(PolicyClass(name: name, typeName: typeName, uses: uses))
        }
        guard !classes.isEmpty else {
            throw TernError(
                .badInput,
                "no entity mapping of \(mappingFiles.joined(separator: ", ")) names a migration policy class: "
                    + "there is nothing to port (run tern migrate with these mappings as they are)")
        }
        self.packageName = packageName
        self.modelPath = modelPath
        self.ternPath = ternPath
        self.packageDirectory = packageDirectory
        self.model = model
        self.classes = classes
    }

    /// A Swift type name for a class name as a mapping gives it: Xcode qualifies it with the
    /// app's module (`MyApp.PostPolicy`), and the registry finds it by its last part. A character
    /// no Swift identifier holds is spelled by its code (`Foo?` → `Foo_3F`), so distinct names
    /// stay distinct; a name too long for a file name keeps its start and a digest of the whole.
    static func typeName(for className: String) -> String {
        var name = ""
        for scalar in className.unicodeScalars {
            let character = Character(scalar)
            name +=
                character.isASCII && (character.isLetter || character.isNumber || character == "_")
                ? String(character) : "_" + String(scalar.value, radix: 16, uppercase: true)
        }
        if name.isEmpty || name.first!.isNumber { name = "_" + name }
        // A keyword, a name the generated files use, or no letter at all: prefixed.
        if keywords.contains(name) || reserved.contains(name) || !name.contains(where: \.isLetter) {
            name = "Ported" + (name.contains(where: \.isLetter) ? name.prefix(1).uppercased() + name.dropFirst() : "Policy")
        }
        // Files are named after the type (`<Type>Tests.swift`): 255 bytes at most on most disks.
        if name.utf8.count > 100 {
            var digest: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: stable from run to run
            for byte in className.utf8 { digest = (digest ^ UInt64(byte)) &* 0x100_0000_01b3 }
            name = name.prefix(80) + "_" + String(digest, radix: 16)
        }
        return name
    }

    /// The stored attributes of `mapping`'s source entity that none of its expressions reads
    /// (`$source.name`), in name order.
    static func unread(by mapping: EntityMapping, in version: ObjectModel?) -> [String] {
        guard let version, let entity = mapping.sourceEntity else { return [] }
        let texts = (mapping.attributeMappings + mapping.relationshipMappings).compactMap(\.valueExpression) + [mapping.filterPredicate].compactMap { $0 }
        var read: Set<String> = []
        for text in texts {
            for match in text.matches(of: /\$source\.([A-Za-z_][A-Za-z0-9_]*)/) { read.insert(String(match.1)) }
        }
        return version.allAttributes(of: entity).filter { !$0.isTransient && !read.contains($0.name) }.map(\.name).sorted()
    }

    /// A class name without the module Xcode qualifies it with.
    static func lastPart(_ className: String) -> String {
        className.split(separator: ".").last.map(String.init) ?? className
    }

    static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.first, first.isLetter || first == "_" else { return false }
        return text.allSatisfy { ($0.isLetter || $0.isNumber || $0 == "_") && $0.isASCII }
    }

    /// Swift's keywords, which no type or module may be named.
    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout", "internal", "let", "open",
        "operator", "private", "precedencegroup", "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var", "break",
        "case", "catch", "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw",
        "switch", "where", "while", "Any", "as", "await", "false", "is", "nil", "self", "Self", "super", "throws", "true", "try", "some", "any",
        "Type", "Protocol", "consume", "copy", "discard", "each", "borrowing", "consuming", "package",
    ]

    /// Names the generated files use (types, modules): a policy or package of that name would
    /// shadow them.
    static let reserved: Set<String> = [
        "Tern", "TernCommands", "TernFleet", "TernBench", "TernTesting", "TernSQLite", "TernLoop", "TernExamples", "TernGenerate", "TernInflate",
        "TernCLI", "TernPlanning", "TernDurability", "TernExecution", "TernModel", "TernStore", "TernMapping", "TernDigest", "FleetCommand",
        "Foundation", "Testing", "Swift", "PackageDescription", "XCTest", "Dispatch", "Glibc", "Darwin",
        "PolicyRegistry", "EntityMigrationPolicy", "SourceObject", "DestinationObject", "InstanceCreationContext", "RelationshipContext",
        "ValidationContext", "EntityMapping", "TestStore", "ModelLoader", "TernCommandLine", "Registry",
        "Int", "Int64", "String", "Bool", "Double", "Error", "Never", "Void", "Optional", "Array", "Dictionary", "Set",
    ]

    /// Every file of the package, by its path inside it.
    func files() -> [(path: String, contents: String)] {
        var files: [(String, String)] = [
            ("Package.swift", packageManifest),
            ("README.md", readme),
            ("Sources/\(libraryName)/Registry.swift", registry),
            ("Sources/\(executableName)/main.swift", main),
        ]
        for policyClass in classes {
            files.append(("Sources/\(libraryName)/Policies/\(policyClass.typeName).swift", policy(policyClass)))
            files.append(("Tests/\(libraryName)Tests/\(policyClass.typeName)Tests.swift", test(policyClass)))
        }
        return files
    }

    // MARK: The files

    /// `path` relative to the package's folder (`../../app/Model.momd`).
    func relative(_ path: String) -> String {
        let from = URL(fileURLWithPath: packageDirectory).standardizedFileURL.pathComponents
        let to = URL(fileURLWithPath: path).standardizedFileURL.pathComponents
        let common = zip(from, to).prefix { $0 == $1 }.count
        let parts = Array(repeating: "..", count: from.count - common) + to[common...]
        return parts.isEmpty ? "." : parts.joined(separator: "/")
    }

    /// `--to V` where the mappings' last destination is not the model's current version (the
    /// command would otherwise migrate past the versions the policies were written for).
    var targetOption: String {
        // Where the mappings' chain ends: a destination no mapping starts from.
        let uses = classes.flatMap(\.uses)
        let ends = Set(uses.map(\.destination)).subtracting(uses.map(\.source))
        guard ends.count == 1, let last = ends.first, last != model.currentVersionName else { return "" }
        return " --to \(last.contains(" ") ? "'\(last)'" : last)"
    }

    /// A path dependency is known by its folder's name: that is the package name products name.
    private var ternPackage: String { URL(fileURLWithPath: ternPath).lastPathComponent }

    private var packageManifest: String {
        """
        // swift-tools-version:6.0
        import PackageDescription

        /// The app's migration policies ported to Tern (scaffolded by `tern policy scaffold`).
        /// Build and run: `swift run \(executableName) migrate STORE --model \(swiftLiteral(relative(modelPath)))\(targetOption)`;
        /// test: `swift test`.
        let package = Package(
            name: \(swiftLiteral(packageName)),
            platforms: [.macOS(.v15)],
            // A path dependency is known by its folder's name (\(swiftLiteral(ternPackage))).
            dependencies: [.package(path: \(swiftLiteral(relative(ternPath))))],
            targets: [
                .target(name: \(swiftLiteral(libraryName)), dependencies: [.product(name: "Tern", package: \(swiftLiteral(ternPackage)))]),
                .executableTarget(
                    name: \(swiftLiteral(executableName)),
                    dependencies: [\(swiftLiteral(libraryName)), .product(name: "Tern", package: \(swiftLiteral(ternPackage))), .product(name: "TernCommands", package: \(swiftLiteral(ternPackage))), .product(name: "TernFleet", package: \(swiftLiteral(ternPackage)))]
                ),
                .testTarget(
                    name: \(swiftLiteral(libraryName + "Tests")),
                    dependencies: [\(swiftLiteral(libraryName)), .product(name: "Tern", package: \(swiftLiteral(ternPackage))), .product(name: "TernTesting", package: \(swiftLiteral(ternPackage)))]
                ),
            ],
            swiftLanguageModes: [.v6]
        )

        """
    }

    private var readme: String {
        let list = classes.map {
            "- `\($0.typeName)` for `\(commentSafe($0.name))` (\($0.uses.map { "\(commentSafe($0.mapping.name)) in \(commentSafe(URL(fileURLWithPath: $0.file).lastPathComponent))" }.joined(separator: ", ")))"
        }
        return """
            # \(packageName)

            The app's entity migration policies, ported to Tern. Scaffolded by `tern policy scaffold`
            from the model `\(relative(modelPath))`; each policy type does what Core Data's default
            `NSEntityMigrationPolicy` does until the app's code is written into it:

            \(list.joined(separator: "\n"))

            - `swift test` migrates generated objects through each policy's mapping and checks the result
              passes Tern's verification; add what the app's own migration tests check.
            - `swift run \(executableName) migrate STORE --model \(relative(modelPath))\(targetOption)` migrates a store with the
              policies registered (every `tern` command works the same).

            """
    }

    private var registry: String {
        let lines = classes.flatMap { policyClass in
            ([policyClass.name] + policyClass.otherNames.sorted()).map { "        registry.register(\(policyClass.typeName)(), as: \(swiftLiteral($0)))" }
        }
        return """
            import Tern

            extension PolicyRegistry {
                /// The app's migration policies, under the class names its mapping models give them.
                public static var appPolicies: PolicyRegistry {
                    var registry = PolicyRegistry()
            \(lines.joined(separator: "\n"))
                    return registry
                }
            }

            """
    }

    private var main: String {
        """
        import Tern
        import TernCommands
        import TernFleet
        import \(libraryName)

        // Tern's command line, with the app's policies registered, and its fleets (tern fleet).
        TernCommandLine.main(registry: .appPolicies, commands: [FleetCommand.self])

        """
    }

    private func policy(_ policyClass: PolicyClass) -> String {
        var said: [String] = []
        for use in policyClass.uses {
            let mapping = use.mapping
            said.append(
                "/// - `\(commentSafe(mapping.name))` (\(commentSafe(URL(fileURLWithPath: use.file).lastPathComponent)), \(commentSafe(use.source)) → \(commentSafe(use.destination))): "
                    + "\(commentSafe(mapping.sourceEntity ?? "no source entity")) → \(commentSafe(mapping.destinationEntity ?? "no destination entity")), \(mapping.type)"
                    + (mapping.filterPredicate.map { ", for source objects where `\(commentSafe($0))`" } ?? ""))
            for property in mapping.attributeMappings + mapping.relationshipMappings {
                said.append("///   - `\(commentSafe(property.name))` ← " + (property.valueExpression.map { "`\(commentSafe($0))`" } ?? "(its default)"))
            }
            for (key, value) in mapping.userInfo.sorted(by: { $0.key < $1.key }) {
                said.append("///   - user info `\(commentSafe(key))`: `\(commentSafe(value))`")
            }
            if !use.unread.isEmpty {
                said.append(
                    "///   - source attributes no expression reads (the app's code may): \(use.unread.map { "`\(commentSafe($0))`" }.joined(separator: ", "))")
            }
            if !use.unfilled.isEmpty {
                said.append(
                    "///   - destination entities no entity mapping of \(commentSafe(URL(fileURLWithPath: use.file).lastPathComponent)) fills (the app's code may create them): "
                        + use.unfilled.map { "`\(commentSafe($0))`" }.joined(separator: ", "))
            }
        }
        return """
            import Foundation
            import Tern

            /// The app's `\(commentSafe(policyClass.name))` (an `NSEntityMigrationPolicy` subclass), ported to Tern.
            ///
            /// What the mapping models ask of it:
            \(said.joined(separator: "\n"))
            ///
            /// Each hook does what Core Data's default policy does; write the app's code in their place.
            /// Values are read with `try source["name"]` (a key the object lacks throws) and set on a
            /// `DestinationObject`; a value of the wrong type for its attribute is refused.
            public struct \(policyClass.typeName): EntityMigrationPolicy {
                /// The policy, as the registry holds it.
                public init() {}

                /// Core Data's `createDestinationInstances(forSource:in:manager:)`: by default, one
                /// destination object from the mapping's value expressions, associated with its source
                /// (relationships are recreated only for associated objects).
                public func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
                    let destination = try context.defaultDestination(for: source)
                    context.associate(source, with: context.create(destination))
                }

                /// Core Data's `createRelationships(forDestination:in:manager:)`: the mapping's
                /// relationship mappings are recreated whatever this does; link more with `context.relate`.
                public func createRelationships(forDestination key: Int64, source: Int64, in context: RelationshipContext) throws {}

                /// Core Data's `performCustomValidation(forMapping:manager:)`: report objects that break
                /// the app's own rules with `context.report(entity:key:rule:)`.
                public func performCustomValidation(_ context: ValidationContext) throws {}
            }

            """
    }

    private func test(_ policyClass: PolicyClass) -> String {
        let use = policyClass.uses[0]
        let mapping = use.mapping
        let check: String
        if let source = mapping.sourceEntity, let destination = mapping.destinationEntity, mapping.filterPredicate == nil {
            check = """
                    // One destination object per source object, as the default policy makes: change this
                    // with the policy, and add what the app's own migration tests check.
                    #expect(try migrated.objects(\(swiftLiteral(destination))).count >= store.objects(\(swiftLiteral(source))).count)
                """
        } else {
            check = """
                    // Add what the app's own migration tests check.
                    #expect(migrated.version.versionName == \(swiftLiteral(use.destination)))
                """
        }
        let function = policyClass.typeName.prefix(1).lowercased() + policyClass.typeName.dropFirst()
        return """
            import Foundation
            import Testing
            import Tern
            import TernTesting
            import \(libraryName)

            /// `\(policyClass.typeName)` run as a migration runs it: generated \(commentSafe(use.source)) objects migrated
            /// to \(commentSafe(use.destination)) through \(commentSafe(URL(fileURLWithPath: use.file).lastPathComponent)), whose `\(commentSafe(mapping.name))` names it; the
            /// result passed Tern's verification.
            @Test func \(function)MigratesGeneratedObjects() async throws {
                let model = try ModelLoader.load(packagePath(\(swiftLiteral(relative(modelPath)))))
                let store = try TestStore(model: model, version: \(swiftLiteral(use.source)), generating: 20)
                let migrated = try await store.migrated(
                    to: \(swiftLiteral(use.destination)), mappingFiles: [packagePath(\(swiftLiteral(relative(use.file))))], registry: .appPolicies)
            \(check)
            }

            /// A path the scaffold wrote relative to the package's folder, wherever the tests run from.
            private func packagePath(_ relative: String) -> String {
                URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                    .appendingPathComponent(relative).standardizedFileURL.path
            }

            """
    }

    /// `text` as a Swift string literal.
    private func swiftLiteral(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            default:
                escaped += scalar.value < 0x20 ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
            }
        }
        return "\"\(escaped)\""
    }

    /// `text` on one comment line: line breaks and backquotes would end it or its code span, and
    /// other control characters have no place in source.
    private func commentSafe(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    scalar == "`"
                        ? "'"
                        : (scalar.properties.generalCategory == .control || scalar.properties.isWhitespace && scalar != " "
                            || scalar == "\u{2028}" || scalar == "\u{2029}" ? " " : scalar)
                }))
    }
}
