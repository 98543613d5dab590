import ArgumentParser
import Foundation
import Tern
import TernCommands
import TernSQLite

/// The chain benchmark's stores (`configs/chain`): Chain 1's join table of book authors and
/// Chain 4's, ordered on the publication's side, named as the layouts store them; and the
/// editor key, whose list (an author's edited publications) Chain 4 orders.
private struct ChainLayouts {
    let source: (table: String, book: String, author: String, editor: String)
    let destination: (table: String, publication: String, author: String, order: String, editor: String, editorOrder: String)

    init(model: String) throws {
        let versioned = try ModelLoader.load(model)
        let first = StoreLayout(model: versioned.versions[0])
        let last = StoreLayout(model: versioned.current)
        guard case .joinTable(let table, let book, let author, _)? = first.storage(ofRelationship: "authors", of: "Book"),
            case .joinTable(let newTable, let publication, let newAuthor, let order?)? = last.storage(ofRelationship: "authors", of: "Publication"),
            case .foreignKey(let editor)? = first.storage(ofRelationship: "editor", of: "Book"),
            case let (_, newEditor, editorOrder?)? = last.storage(ofRelationship: "edited", of: "Author")?.keyInDestinations
        else {
            throw TernError(
                .badInput,
                "not the chain benchmark's model: Book.authors and Publication.authors (ordered) must be many-to-many, Author.edited an ordered to-many with a to-one inverse",
                path: model)
        }
        source = (table, book, author, editor)
        destination = (newTable, publication, newAuthor, order, newEditor, editorOrder)
    }
}

/// The chain benchmark's ceiling: Chain 1 → 4 as one hand-written SQL pass — authors with their
/// name renamed, books as publications without notes and with edition 1 and their editor, the
/// authors' links and each editor's publications numbered in key order (as tern orders a list
/// that had no order) — keys kept, indexes after.
struct ChainCeilingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chain-sql-ceiling", abstract: "Run the chain benchmark's hand-written SQL baseline (used by tern bench).", shouldDisplay: false)

    @OptionGroup var arguments: BaselineArguments

    func run() throws {
        let layouts = try ChainLayouts(model: arguments.model)
        let (from, to) = (layouts.source, layouts.destination)
        try arguments.runCeiling(tables: ["ZAUTHOR", "ZPUBLICATION"]) { connection, number in
            try connection.execute(
                "INSERT INTO ZAUTHOR (Z_PK, Z_ENT, Z_OPT, ZFULLNAME, ZBORN) SELECT Z_PK, \(number("Author")), 1, ZNAME, ZBORN FROM src.ZAUTHOR")
            try connection.execute(
                """
                INSERT INTO ZPUBLICATION (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZPRICE, ZEDITION, \(to.editor), \(to.editorOrder))
                SELECT Z_PK, \(number("Publication")), 1, ZTITLE, ZPRICE, 1, \(from.editor),
                       CASE WHEN \(from.editor) IS NOT NULL THEN 1024 * (row_number() OVER (PARTITION BY \(from.editor) ORDER BY Z_PK) + 1) END
                FROM src.ZBOOK ORDER BY Z_PK
                """)
            try connection.execute(
                """
                INSERT INTO \(to.table) (\(to.publication), \(to.author), \(to.order))
                SELECT \(from.book), \(from.author), 1024 * (row_number() OVER (PARTITION BY \(from.book) ORDER BY \(from.author)) + 1)
                FROM src.\(from.table)
                """)
        }
    }
}

/// The chain benchmark's naive baseline: every row read and inserted one by one with new keys
/// from in-memory dictionaries, then every link, numbered per publication as it goes.
struct ChainNaiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chain-naive", abstract: "Run the chain benchmark's naive row-by-row baseline (used by tern bench).", shouldDisplay: false)

    @OptionGroup var arguments: BaselineArguments

    func run() throws {
        let started = ContinuousClock.now
        let layouts = try ChainLayouts(model: arguments.model)
        let (from, to) = (layouts.source, layouts.destination)
        let (layout, connection, input) = try arguments.openRowByRow()
        var objects = 0
        func copy(_ select: String, into insert: String, transform: ([SQLiteValue]) -> [SQLiteValue]) throws -> [Int64: Int64] {
            try RowByRow.copy(select, from: input, into: insert, of: connection, counting: &objects, transform: transform)
        }
        let authors = try copy(
            "SELECT Z_PK, ZNAME, ZBORN FROM ZAUTHOR",
            into: "INSERT INTO ZAUTHOR (Z_PK, Z_ENT, Z_OPT, ZFULLNAME, ZBORN) VALUES (?, \(layout.entities["Author"]!.number), 1, ?, ?)"
        ) { [$0[1], $0[2]] }
        // Each editor's publications numbered as they come, in key order.
        var edited: [Int64: Int64] = [:]
        let publications = try copy(
            "SELECT Z_PK, ZTITLE, ZPRICE, \(from.editor) FROM ZBOOK ORDER BY Z_PK",
            into:
                "INSERT INTO ZPUBLICATION (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZPRICE, ZEDITION, \(to.editor), \(to.editorOrder)) VALUES (?, \(layout.entities["Publication"]!.number), 1, ?, ?, 1, ?, ?)"
        ) { row in
            guard let editor = row[3].int64, let author = authors[editor] else { return [row[1], row[2], .null, .null] }
            let position = edited[editor, default: 0] + 1
            edited[editor] = position
            return [row[1], row[2], .integer(author), .integer(1024 * (position + 1))]
        }
        // The statements end with this function, before the store is closed.
        func copyLinks() throws {
            let link = try connection.prepare("INSERT INTO \(to.table) (\(to.publication), \(to.author), \(to.order)) VALUES (?, ?, ?)")
            var rows = try input.prepare("SELECT \(from.book), \(from.author) FROM \(from.table) ORDER BY \(from.book), \(from.author)").rows()
            var (current, position): (Int64, Int64) = (0, 0)
            var links = 0
            try connection.execute("BEGIN")
            while let row = try rows.next() {
                let (book, author) = (row.int64(at: 0), row.int64(at: 1))
                position = book == current ? position + 1 : 1
                current = book
                guard let publication = publications[book], let newAuthor = authors[author] else { continue }
                try link.bind([publication, newAuthor, 1024 * (position + 1)])
                try link.run()
                links += 1
                if links % 100_000 == 0 { try connection.execute("COMMIT"); try connection.execute("BEGIN") }
            }
            try connection.execute("COMMIT")
        }
        try copyLinks()
        try arguments.finish(connection, objects: objects, since: started)
    }
}
