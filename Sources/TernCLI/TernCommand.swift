import ArgumentParser
import Tern

@main
struct TernCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tern",
        abstract: "Migrate SQLite object stores (Core Data's layout) from one model version to the next.",
        discussion: "Exit codes are listed in the README under \"Exit codes\".",
        version: "0.1.0",
        subcommands: [DemoCommand.self, InspectCommand.self, CheckCommand.self, GenerateCommand.self, InferCommand.self, MigrateCommand.self]
    )
}
