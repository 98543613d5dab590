import Foundation
import FuzzDriver
import Tern

/// Fuzzes the readers of the files users hand Tern: binary property lists (Core Data's metadata),
/// the keyed archives of value expressions inside Xcode mapping models, Tern's YAML model and mapping files,
/// Xcode's model XML and mapping models, compiled models (`.mom`) and the raw-DEFLATE model cache a store
/// keeps (`Z_MODELCACHE`). Any bytes must give a model, a mapping or an error —
/// never a crash, a hang or memory beyond libFuzzer's -rss_limit_mb. The target is chosen by
/// TERN_FUZZ_TARGET: plist, keyed-archive, model-yaml, xcdatamodel, mapping-yaml, xcmapping,
/// compiled-model or model-cache.
let target = ProcessInfo.processInfo.environment["TERN_FUZZ_TARGET"] ?? "plist"
let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tern-fuzz-\(getpid())")

/// A small model for mappings to be read against.
let model = ObjectModel(versionName: "fuzz", entities: [
    Entity(name: "Book", attributes: [Attribute(name: "title", type: .string), Attribute(name: "price", type: .double)],
           relationships: [Relationship(name: "pages", destination: "Page", inverse: "book", isToMany: true)]),
    Entity(name: "Page", attributes: [Attribute(name: "text", type: .string)],
           relationships: [Relationship(name: "book", destination: "Book", inverse: "pages")]),
])

/// Writes `data` as `name` under a fresh scratch folder and returns its path.
func file(_ name: String, _ data: Data) -> String {
    try? FileManager.default.removeItem(at: scratch)
    let url = scratch.appendingPathComponent(name)
    try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try? data.write(to: url)
    return url.path
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let data = Data(bytes: bytes, count: size)
    switch target {
    case "plist":
        _ = try? BinaryPropertyList.decode([UInt8](data))
    case "keyed-archive":
        _ = try? ArchivedExpression.text(from: [UInt8](data))
    case "model-yaml":
        _ = try? ModelLoader.load(file("model.yaml", data))
    case "xcdatamodel":
        _ = try? ModelLoader.load(URL(fileURLWithPath: file("Fuzz.xcdatamodel/contents", data)).deletingLastPathComponent().path)
    case "mapping-yaml":
        _ = try? MappingLoader.load(file("mapping.yaml", data), source: model, destination: model)
    case "compiled-model":
        _ = try? ModelLoader.load(file("Fuzz.mom", data))
    case "model-cache":
        _ = try? StoreModelCache.decode([UInt8](data), versionName: "fuzz")
    case "xcmapping":
        _ = try? MappingLoader.load(URL(fileURLWithPath: file("Fuzz.xcmappingmodel/xcmapping.xml", data)).deletingLastPathComponent().path, source: model, destination: model)
    default:
        fatalError("TERN_FUZZ_TARGET=\(target) is not plist, keyed-archive, model-yaml, xcdatamodel, mapping-yaml, xcmapping, compiled-model or model-cache")
    }
    return 0
}

/// SwiftPM links an executable target through a renamed `main`; this one hands over to libFuzzer.
@_cdecl("FileFormatFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
