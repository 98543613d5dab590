import Tern
import TernCommands

extension RecoveryWording {
    /// Words for a store of a fleet (`tern fleet run`): each attempt resumes what the last began.
    static let fleet = RecoveryWording { action in
        switch action {
        case .resume: "the shard's next attempt (tern fleet run) resumes it"
        case .restart: "discard it (tern migrate STORE --model MODEL --restart) and run the shard again"
        case .outputPath: "--out"
        case .refuseDataLoss: "--no-data-loss"
        }
    }
}
