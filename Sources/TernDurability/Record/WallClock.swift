import Foundation

/// What "now" is wherever the wall clock decides something: whether a store file has been still
/// long enough for its state to prove that no one wrote it (`StoreFileState.isStill`). Tests move
/// it instead of sleeping until a file is old enough; the system's clock otherwise.
package struct WallClock: Sendable {
    private let read: @Sendable () -> Date

    /// A clock that reads `read`.
    package init(_ read: @escaping @Sendable () -> Date) { self.read = read }

    /// The system's clock.
    package static let system = WallClock { Date() }

    /// The system's clock, `seconds` ahead: files written now look that much older.
    package static func shifted(by seconds: Double) -> WallClock {
        WallClock { Date().addingTimeInterval(seconds) }
    }

    /// The time now, by this clock.
    package func now() -> Date { read() }
}
