import Foundation
import Tern

/// `--progress json`: one JSON object per line on standard output, for servers and log pipelines.
/// Every line has `event` and the fields of `ProgressSnapshot`; the article "Commands" documents the schema.
final class JSONProgressWriter: ProgressRenderer {
    func render(_ event: MigrationEvent, _ snapshot: ProgressSnapshot) {
        var line = ProgressLine(event: Self.name(of: event), progress: snapshot)
        switch event {
        case .started(let outline): line.outline = outline
        case .entityMappingFinished(_, _, let objects): line.objects = objects
        case .passFinished(let report): line.passReport = report
        default: break
        }
        Self.write(line)
    }

    func finish() {}

    static func name(of event: MigrationEvent) -> String {
        switch event {
        case .started: "started"
        case .stepStarted: "stepStarted"
        case .passStarted: "passStarted"
        case .batchCommitted: "batchCommitted"
        case .entityMappingFinished: "entityMappingFinished"
        case .passFinished: "passFinished"
        case .stepStage: "stepStage"
        case .stepFinished: "stepFinished"
        }
    }

    static func write<Line: Encodable>(_ line: Line) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let environment = CommandEnvironment.current
        guard let data = try? encoder.encode(line), !environment.stop.becauseOutputClosed else { return }
        do {
            try environment.output.write(String(decoding: data, as: UTF8.self) + "\n")
        } catch {
            environment.stop.outputWasClosed()
        }
    }
}

/// One line of `--progress json`: the event's name, the snapshot's fields, and what the event adds.
struct ProgressLine: Encodable {
    var event: String
    var progress: ProgressSnapshot
    var outline: MigrationOutline?
    var objects: Int?
    var passReport: PassReport?

    private enum Keys: String, CodingKey { case event, outline, objects, pass = "passReport" }

    func encode(to encoder: any Encoder) throws {
        try progress.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(event, forKey: .event)
        try container.encodeIfPresent(outline, forKey: .outline)
        try container.encodeIfPresent(objects, forKey: .objects)
        try container.encodeIfPresent(passReport, forKey: .pass)
    }
}
