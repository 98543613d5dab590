import Logging
import TernModel
import TernStore
import TernMapping

extension Logger {
    /// The logger a migration gets when its program gives none: notices and above only. A library
    /// run should not fill its program's standard error with the stages of every migration
    /// (the source digest alone is read three times); a program that wants them passes its own.
    public static var ternDefault: Logger {
        var logger = Logger(label: "tern.migrate")
        logger.logLevel = .notice
        return logger
    }
}
