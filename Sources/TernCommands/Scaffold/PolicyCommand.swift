import ArgumentParser
import Foundation
import Tern

/// `tern policy`: the app's own migration policies.
struct PolicyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Port an app's NSEntityMigrationPolicy subclasses to Tern.",
        subcommands: [PolicyScaffoldCommand.self]
    )
}

/// `tern policy scaffold`: writes the Swift package the app's policies are ported into.
struct PolicyScaffoldCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scaffold",
        abstract: "Write a Swift package with one policy type per class the mapping models name.",
        discussion: """
            The package depends on Tern, holds one EntityMigrationPolicy per class the mappings \
            name (each hook doing what Core Data's default policy does, its comment saying what \
            the mappings ask of the class), a registry under the names the mappings give, an \
            executable running tern with them, and a TernTesting test per policy. It builds and \
            its tests pass as written: write the app's code into the hooks.
            """
    )

    @Option(help: "The model (see tern check --help); its mapping models are read when --mapping is not given.")
    var model: String

    @Option(parsing: .upToNextOption, help: "Mapping models (YAML, .xcmappingmodel or compiled .cdm) that name policy classes.")
    var mapping: [String] = []

    @Option(help: "The folder to write the package in (it must not exist, or be empty).")
    var out: String

    @Option(help: "The package's name, a Swift identifier (default: the model's name followed by Policies).")
    var name: String?

    @Option(help: "Tern's checkout, for the package's path dependency (default: the one this tern was built from).")
    var tern: String?

    @OptionGroup var global: GlobalOptions

    func run() throws {
        try reportingErrors {
            let versioned = try loadModel([model])
            warn(about: versioned, versions: nil)
            let mappings = mapping.isEmpty ? MigrationPlanner.mappingFiles(for: versioned) : mapping
            guard !mappings.isEmpty else {
                throw TernError(.missingInput, "no mapping models were found beside the model: name them with --mapping", path: model)
            }
            let ternPath = try tern.map { try Self.checkTernCheckout(Self.absolute($0)) } ?? Self.ternCheckout()
            let packageName = name ?? (PolicyScaffold.typeName(for: versioned.name.replacingOccurrences(of: " ", with: "")) + "Policies")
            let scaffold = try PolicyScaffold(
                model: versioned, modelPath: Self.absolute(versioned.path), mappingFiles: mappings.map(Self.absolute),
                packageName: packageName, ternPath: ternPath, packageDirectory: Self.absolute(out))
            try Self.checkEmpty(out)
            try Self.write(scaffold.files(), to: out)
            let types = scaffold.classes.map { "\($0.typeName) (\($0.name))" }.joined(separator: ", ")
            print("Wrote the package \(packageName) to \(out): \(scaffold.classes.count) \(scaffold.classes.count == 1 ? "policy" : "policies"), \(types).")
            print(
                "Next: write the app's code into each policy's hooks; cd \(out) && swift test; swift run \(scaffold.executableName) migrate STORE --model \(scaffold.relative(versioned.path))\(scaffold.targetOption)"
            )
        }
    }

    /// Writes the package into a folder beside `out`, then renames it into place: a failure
    /// leaves nothing that would block running again.
    static func write(_ files: [(path: String, contents: String)], to out: String) throws {
        let fileManager = FileManager.default
        let target = URL(fileURLWithPath: absolute(out))
        let scratch = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).tern-scaffold-\(UUID().uuidString)")
        do {
            for file in files {
                let url = scratch.appendingPathComponent(file.path)
                try fileManager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try file.contents.write(to: url, atomically: true, encoding: .utf8)
            }
            if fileManager.fileExists(atPath: target.path) { try fileManager.removeItem(at: target) }  // empty, as checked
            try fileManager.moveItem(at: scratch, to: target)
        } catch {
            try? fileManager.removeItem(at: scratch)
            throw TernError(.io, "cannot write the package: \(error.localizedDescription)", path: out)
        }
    }

    /// An absolute path: the package is built from another folder.
    static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// The output must be new (or an empty folder): a scaffold never writes over someone's work.
    static func checkEmpty(_ folder: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) else { return }
        guard isDirectory.boolValue, (try? FileManager.default.contentsOfDirectory(atPath: folder))?.isEmpty == true else {
            throw TernError(.badInput, "already exists and is not an empty folder; the scaffold never writes over files: choose another --out", path: folder)
        }
    }

    /// The checkout this binary was built in (`.build/<config>/tern` or
    /// `.build/<triple>/<config>/tern` inside it), known by its `Package.swift` naming Tern.
    static func ternCheckout() throws -> String {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var folder = executable.deletingLastPathComponent()
        for _ in 0..<4 {
            folder = folder.deletingLastPathComponent()
            if let checkout = try? checkTernCheckout(folder.standardizedFileURL.path) { return checkout }
        }
        throw TernError(.missingInput, "Tern's checkout was not found above \(executable.path): name it with --tern PATH")
    }

    /// `path` when it is a checkout of Tern: a `Package.swift` naming the package Tern.
    static func checkTernCheckout(_ path: String) throws -> String {
        let manifest = URL(fileURLWithPath: path).appendingPathComponent("Package.swift").path
        guard let text = try? String(contentsOfFile: manifest, encoding: .utf8), text.contains("name: \"Tern\"") else {
            throw TernError(.missingInput, "not a checkout of Tern: no Package.swift naming the package Tern", path: path)
        }
        return path
    }
}
