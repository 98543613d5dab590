import Tern
import Foundation
import TernSQLite

/// The multi-pass example's custom code (seeds/004, `configs/events/`).
public enum EventsExample {
    /// `StepOneEntityMigrationPolicy`: the event's date as text. The original formats it with
    /// the user's locale; this writes it the same way everywhere, so migrations are reproducible.
    public struct PrintedDatePolicy: EntityMigrationPolicy {
        /// The policy; it has no configuration.
        public init() {}

        /// Creates one destination object whose `printedDate` is the source's `timeStamp` as UTC text (left
        /// at its default when the time stamp is NULL). Throws `TernError(.badInput)` for one no calendar
        /// can print.
        public func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            guard let entity = context.mapping.destinationEntity else {
                throw TernError(.badInput, "entity mapping \(context.mapping.name) names no destination entity for \(Self.self) to create")
            }
            var object = DestinationObject(entity: entity)
            if let seconds = try source["timeStamp"].double {
                guard let text = Self.printed(seconds) else {
                    throw TernError(
                        .badInput,
                        "entity mapping \(context.mapping.name): \(context.mapping.sourceEntity ?? "") \(source.key) has a timeStamp of \(seconds) seconds, which is no calendar date"
                    )
                }
                object["printedDate"] = .text(text)
            }
            context.associate(source, with: context.create(object))
        }

        /// "yyyy-MM-dd HH:mm:ss" in UTC for seconds since 2001-01-01, as `DateFormatter` with the
        /// POSIX locale writes it, without building a formatter per row. Nil for a number no calendar
        /// can print (infinite, or beyond the years `gmtime_r` handles).
        static func printed(_ seconds: Double) -> String? {
            guard let whole = Int64(exactly: (seconds + Date.timeIntervalBetween1970AndReferenceDate).rounded(.down)) else { return nil }
            var time = time_t(whole)
            var parts = tm()
            guard gmtime_r(&time, &parts) != nil else { return nil }
            func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
            let year = Int(parts.tm_year) + 1900
            let yearText = year >= 0 && year < 1000 ? String(repeating: "0", count: 4 - "\(year)".count) + "\(year)" : "\(year)"
            return "\(yearText)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
        }
    }
}
