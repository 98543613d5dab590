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
        // Decoded, then checked and walked as check and plan do: a cycle must be reported, never
        // recursed into.
        if let model = try? StoreModelCache.decode([UInt8](data), versionName: "fuzz") {
            _ = model.entityNumbers
            for entity in model.entities { _ = model.descendants(of: entity.name) }
            if model.problems().isEmpty {
                _ = StoreLayout(model: model).createTableStatements
                _ = model.versionHashes
            }
        }
    case "xcmapping":
        _ = try? MappingLoader.load(URL(fileURLWithPath: file("Fuzz.xcmappingmodel/xcmapping.xml", data)).deletingLastPathComponent().path, source: model, destination: model)
    default:
        fatalError("TERN_FUZZ_TARGET=\(target) is not plist, keyed-archive, model-yaml, xcdatamodel, mapping-yaml, xcmapping, compiled-model or model-cache")
    }
    return 0
}

@_silgen_name("LLVMFuzzerMutate")
func libFuzzerMutate(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int) -> Int

/// Mutations that make inheritance cycles, which byte flips almost never do: for the archive
/// targets, one in four mutations rewires one to three object references (`UID`s) of the binary
/// property list to other references found in it — a superentity pointing at a subentity, an
/// entity at itself. A model cache is rewired inside its stored (uncompressed) DEFLATE blocks,
/// as `scripts/fuzz` seeds some; other inputs get libFuzzer's own mutations.
@_cdecl("LLVMFuzzerCustomMutator")
public func customMutator(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: CUnsignedInt) -> Int {
    var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 | 1
    func next(_ bound: Int) -> Int {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return Int(state % UInt64(max(bound, 1)))
    }
    guard target == "compiled-model" || target == "model-cache", next(4) == 0 else { return libFuzzerMutate(data, size, maxSize) }
    let bytes = UnsafeMutableBufferPointer(start: data, count: size)
    // Where the plist's bytes are: all of them, or the payloads of a cache's stored blocks.
    var positions: [Int] = []
    if target == "compiled-model" {
        positions = Array(0..<size)
    } else {
        var offset = 0
        while offset + 5 <= size, bytes[offset] & 0b110 == 0 {
            let length = Int(bytes[offset + 1]) | Int(bytes[offset + 2]) << 8
            guard offset + 5 + length <= size else { break }
            positions += (offset + 5)..<(offset + 5 + length)
            if bytes[offset] & 1 == 1 { break }
            offset += 5 + length
        }
    }
    // One-byte UIDs (0x80, value), and the values they hold.
    let references = positions.indices.dropLast().filter { bytes[positions[$0]] == 0x80 }.map { positions[$0 + 1] }
    guard references.count > 1 else { return libFuzzerMutate(data, size, maxSize) }
    let values = references.map { bytes[$0] }
    for _ in 0...next(3) {
        bytes[references[next(references.count)]] = values[next(values.count)]
    }
    return size
}

/// SwiftPM links an executable target through a renamed `main`; this one hands over to libFuzzer.
@_cdecl("FileFormatFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
