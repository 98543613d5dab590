import FuzzDriver
import Tern

/// The model every fuzzed expression is bound to: a little of everything the binder handles.
let model = ObjectModel(versionName: "fuzz", entities: [
    Entity(name: "Book", attributes: [
        Attribute(name: "title", type: .string), Attribute(name: "price", type: .double),
        Attribute(name: "count", type: .integer64), Attribute(name: "size", type: .integer32),
    ], relationships: [
        Relationship(name: "pages", destination: "Page", inverse: "book", isToMany: true),
        Relationship(name: "author", destination: "Author"),
    ]),
    Entity(name: "Page", attributes: [Attribute(name: "text", type: .string)],
           relationships: [Relationship(name: "book", destination: "Book", inverse: "pages")]),
    Entity(name: "Author", attributes: [Attribute(name: "name", type: .string)]),
])

let layout = StoreLayout(model: model)

/// libFuzzer's entry point: any bytes must give a value or an ExpressionError, never a crash;
/// and what binds must compile to SQL that grows linearly with the text (an exponential blow-up
/// is a finding: it traps here, and libFuzzer's -rss_limit_mb catches one that runs out of memory first).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let limit = 10_000 + 2_000 * size
    var compiler = SQLCompiler(layout: layout)
    if let expression = try? ExpressionBinder.expression(text, entity: "Book", model: model, variables: ["x": .integer(1)]) {
        let sql = compiler.sql(expression, alias: "s").sql
        precondition(sql.utf8.count <= limit, "\(size) bytes of expression compiled to \(sql.utf8.count) bytes of SQL")
    }
    if let predicate = try? ExpressionBinder.predicate(text, entity: "Book", model: model, variables: ["x": .text("a")]) {
        let sql = compiler.sql(predicate, alias: "s").sql
        precondition(sql.utf8.count <= limit, "\(size) bytes of predicate compiled to \(sql.utf8.count) bytes of SQL")
    }
    return 0
}

/// SwiftPM links an executable target through a renamed `main`; this one hands over to libFuzzer.
@_cdecl("ExpressionFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
