import ArgumentParser
import Foundation
import Tern
import TernCommands
import TernSQLite

/// The attachments benchmark's ceiling: Attachments 1 → 2 (configs/attachments) as a script
/// would do it — one INSERT … SELECT per table with keys kept and values copied as they are, then
/// a hard link for every file of the support folder (`cp -al`). Nothing checkpointed or proven.
struct AttachmentsCeilingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attachments-sql-ceiling", abstract: "Run the attachments' hand-written baseline (used by tern bench).", shouldDisplay: false)

    @OptionGroup var arguments: BaselineArguments

    func run() throws {
        try arguments.runCeiling(tables: ["ZFOLDER", "ZDOCUMENT"]) { connection, number in
            try connection.execute("INSERT INTO ZFOLDER (Z_PK, Z_ENT, Z_OPT, ZNAME) SELECT Z_PK, \(number("Folder")), 1, ZNAME FROM src.ZFOLDER")
            try connection.execute(
                """
                INSERT INTO ZDOCUMENT (Z_PK, Z_ENT, Z_OPT, ZNAME, ZATTACHMENT, ZTHUMBNAIL, ZFOLDER)
                SELECT Z_PK, \(number("Document")), 1, ZTITLE, ZATTACHMENT, ZTHUMBNAIL, ZFOLDER FROM src.ZDOCUMENT
                """)
        } after: {
            let files = ExternalBinaryData.folder(forStore: arguments.source)
            let carried = ExternalBinaryData.folder(forStore: arguments.destination)
            try FileManager.default.createDirectory(atPath: carried, withIntermediateDirectories: true)
            for file in try FileManager.default.contentsOfDirectory(atPath: files) {
                try FileManager.default.linkItem(atPath: files + "/" + file, toPath: carried + "/" + file)
            }
        }
    }
}

/// The attachments benchmark's naive baseline: every row read and inserted one by one with new
/// keys looked up in dictionaries, and the file of every value stored outside read and written
/// again beside the new store.
struct AttachmentsNaiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attachments-naive", abstract: "Run the attachments' naive baseline (used by tern bench).", shouldDisplay: false)

    @OptionGroup var arguments: BaselineArguments

    func run() throws {
        let started = ContinuousClock.now
        let (layout, connection, input) = try arguments.openRowByRow()
        let files = ExternalBinaryData.folder(forStore: arguments.source)
        let carried = ExternalBinaryData.folder(forStore: arguments.destination)
        try FileManager.default.createDirectory(atPath: carried, withIntermediateDirectories: true)

        var folders: [Int64: Int64] = [:]
        try connection.execute("BEGIN")
        let folder = try connection.prepare("INSERT INTO ZFOLDER (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, \(layout.entities["Folder"]!.number), 1, ?)")
        var rows = try input.prepare("SELECT Z_PK, ZNAME FROM ZFOLDER").rows()
        while let row = try rows.next() {
            folders[row.int64(at: 0)] = Int64(folders.count + 1)
            try folder.bind([.integer(Int64(folders.count)), row.value(at: 1)])
            try folder.run()
        }
        let document = try connection.prepare(
            """
            INSERT INTO ZDOCUMENT (Z_PK, Z_ENT, Z_OPT, ZNAME, ZATTACHMENT, ZTHUMBNAIL, ZFOLDER) VALUES (?, \(layout.entities["Document"]!.number), 1, ?, ?, ?, ?)
            """)
        rows = try input.prepare("SELECT ZTITLE, ZATTACHMENT, ZTHUMBNAIL, ZFOLDER FROM ZDOCUMENT").rows()
        var documents: Int64 = 0
        while let row = try rows.next() {
            documents += 1
            for column in [1, 2] {
                if let name = row.blob(at: column).flatMap(ExternalBinaryData.reference), let bytes = FileManager.default.contents(atPath: files + "/" + name) {
                    try bytes.write(to: URL(fileURLWithPath: carried + "/" + name))
                }
            }
            try document.bind([
                .integer(documents), row.value(at: 0), row.value(at: 1), row.value(at: 2),
                row.value(at: 3).int64.flatMap { folders[$0] }.map(SQLiteValue.integer) ?? .null,
            ])
            try document.run()
        }
        try connection.execute("COMMIT")
        folder.finalize()
        document.finalize()
        try arguments.finish(connection, objects: folders.count + Int(documents), since: started)
    }
}
