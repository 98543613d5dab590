import Foundation
import TernSQLite

/// The multi-pass example's custom code (seeds/004, `configs/events/`).
public enum EventsExample {
    /// `StepOneEntityMigrationPolicy`: the event's date as text. The original formats it with
    /// the user's locale; this writes it the same way everywhere, so migrations are reproducible.
    public struct PrintedDatePolicy: EntityMigrationPolicy {
        public init() {}

        public func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            var object = DestinationObject(entity: context.mapping.destinationEntity!)
            if let seconds = source["timeStamp"].double {
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "UTC")
                formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
                object["printedDate"] = .text(formatter.string(from: Date(timeIntervalSinceReferenceDate: seconds)))
            }
            context.associate(source, with: context.create(object))
        }
    }
}
