import CZlib

/// Raw DEFLATE (RFC 1951, no zlib header) decompression, bounded: the one layer that calls
/// zlib. Core Data keeps the model a store was written with in `Z_MODELCACHE` this way.
public enum Inflate {
    /// Why the bytes could not be inflated.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        /// What is wrong with the input, in words.
        public let description: String
    }

    /// The inflated bytes of `compressed`, which must be one complete raw DEFLATE stream that
    /// inflates to at most `limit` bytes: a stream that would grow past it (an inflate bomb) is
    /// refused as soon as it does, having used at most `limit` bytes of memory.
    public static func raw(_ compressed: [UInt8], limit: Int) throws -> [UInt8] {
        var stream = z_stream()
        guard tern_inflate_init_raw(&stream) == Z_OK else { throw Failure(description: "zlib could not start inflating") }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        return try compressed.withUnsafeBufferPointer { input in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = UInt32(input.count)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { buffer -> Int32 in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = UInt32(buffer.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                guard output.count + produced <= limit else {
                    throw Failure(description: "inflates to more than \(limit) bytes")
                }
                output += chunk[0..<produced]
                switch status {
                case Z_STREAM_END:
                    return output
                case Z_OK:
                    // No progress with input left means the stream is cut short.
                    if produced == 0 && stream.avail_in == 0 { throw Failure(description: "the compressed data is truncated") }
                case Z_BUF_ERROR:
                    throw Failure(description: "the compressed data is truncated")
                default:
                    throw Failure(description: "not raw DEFLATE data (zlib: \(stream.msg.map { String(cString: $0) } ?? "error \(status)"))")
                }
            }
        }
    }
}
