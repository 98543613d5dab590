import CCrypto
import Foundation

/// SHA-256 and SHA-512 from the system's libcrypto: the one layer over it. Core Data's version
/// hashes are SHA-256 (entities, properties) and SHA-512 (a model's), and Tern's content digests
/// SHA-256; the system library computes them without a cryptography package to build.
///
/// The API is that of swift-crypto's hash functions (`SHA256.hash(data:)`, or `update(data:)`
/// then `finalize()`), so a digest reads the same wherever it is taken.
public protocol DigestFunction: Sendable {
    /// The algorithm's libcrypto description.
    static var algorithm: OpaquePointer { get }
    init()
}

/// A finished digest: its bytes, compared and hashed by value.
public struct Digest: Sequence, Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }

    /// Lowercase hexadecimal, as `sha256sum` prints it.
    public var description: String { bytes.map { String(format: "%02x", $0) }.joined() }
}

/// One running digest: `EVP_MD_CTX`, freed with its last owner and copied before a shared one is
/// changed, so the value types above it keep value semantics.
final class DigestContext: @unchecked Sendable {
    let context: OpaquePointer

    init(algorithm: OpaquePointer) {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, algorithm, nil) == 1 else {
            fatalError("libcrypto cannot start a digest (out of memory)")
        }
        self.context = context
    }

    init(copying other: DigestContext) {
        guard let context = EVP_MD_CTX_new(), EVP_MD_CTX_copy_ex(context, other.context) == 1 else {
            fatalError("libcrypto cannot copy a digest (out of memory)")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        // Never fails for a started SHA-2 digest and memory that is there.
        _ = EVP_DigestUpdate(context, base, bytes.count)
    }

    func finish() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &bytes, &length) == 1 else { fatalError("libcrypto cannot finish a digest") }
        return Array(bytes.prefix(Int(length)))
    }
}

/// A running digest of algorithm `Function`.
public struct RunningDigest<Function: DigestFunction>: Sendable {
    private var context = DigestContext(algorithm: Function.algorithm)

    public init() {}

    /// Adds `data`'s bytes.
    public mutating func update<D: DataProtocol>(data: D) {
        if !isKnownUniquelyReferenced(&context) { context = DigestContext(copying: context) }
        for region in data.regions { region.withUnsafeBytes { context.update($0) } }
    }

    /// The digest of every byte added; the running digest is left as it was.
    public func finalize() -> Digest {
        Digest(bytes: DigestContext(copying: context).finish())
    }
}

extension DigestFunction {
    /// The digest of `data`.
    public static func hash<D: DataProtocol>(data: D) -> Digest {
        var running = RunningDigest<Self>()
        running.update(data: data)
        return running.finalize()
    }
}

/// SHA-256 (32 bytes).
public struct SHA256Function: DigestFunction {
    public static var algorithm: OpaquePointer { EVP_sha256() }
    public init() {}
}

/// SHA-512 (64 bytes).
public struct SHA512Function: DigestFunction {
    public static var algorithm: OpaquePointer { EVP_sha512() }
    public init() {}
}

/// SHA-256: `SHA256.hash(data:)`, or `var hash = SHA256()`, `update(data:)`, `finalize()`.
public typealias SHA256 = RunningDigest<SHA256Function>
/// SHA-512.
public typealias SHA512 = RunningDigest<SHA512Function>

extension RunningDigest {
    /// The digest of `data`.
    public static func hash<D: DataProtocol>(data: D) -> Digest { Function.hash(data: data) }

    /// The type of a finished digest (`SHA256.Digest`).
    public typealias Digest = TernDigest.Digest
}
