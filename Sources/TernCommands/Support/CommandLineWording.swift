import Tern

extension RecoveryWording {
    /// Words for a person at the command line: flags (`--resume`).
    package static let commandLine = RecoveryWording { action in
        switch action {
        case .resume: "run the same command with --resume"
        case .restart: "run the same command with --restart"
        case .outputPath: "--out"
        case .refuseDataLoss: "--no-data-loss"
        }
    }
}
