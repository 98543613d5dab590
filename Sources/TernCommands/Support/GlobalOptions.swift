import ArgumentParser
import Foundation
import Logging

/// Options every subcommand accepts.
package struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Log level on standard error: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .warning

    package init() {}

    /// Sets up swift-log once; the library only ever receives `Logger` values.
    package func makeLogger(label: String) -> Logger {
        LoggingBootstrap.once
        var logger = Logger(label: label)
        logger.logLevel = logLevel
        return logger
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

private enum LoggingBootstrap {
    static let once: Void = LoggingSystem.bootstrap(StreamLogHandler.standardError)
}
