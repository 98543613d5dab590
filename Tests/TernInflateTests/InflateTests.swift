import Foundation
import Testing
@testable import TernInflate

/// Raw DEFLATE through zlib, bounded. Compressed inputs come from Python's zlib, an independent
/// encoder run as a separate program.
@Suite("Inflate: raw DEFLATE, bounded")
struct InflateTests {
    /// `text` deflated raw (wbits -15) by Python.
    static func deflated(_ text: String, repeated count: Int = 1) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c",
            "import sys, zlib; c = zlib.compressobj(9, zlib.DEFLATED, -15); sys.stdout.buffer.write(c.compress(sys.argv[1].encode() * int(sys.argv[2])) + c.flush())",
            text, String(count),
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return [UInt8](data)
    }

    @Test("what Python deflates inflates back, across chunk boundaries")
    func roundTrip() throws {
        for (text, count) in [("", 1), ("Z_MODELCACHE", 1), ("0123456789abcdef", 50_000)] {
            let inflated = try Inflate.raw(try Self.deflated(text, repeated: count), limit: 1 << 20)
            #expect(inflated == Array(String(repeating: text, count: count).utf8))
        }
    }

    @Test("a bomb is refused at the limit; truncated and garbage input are errors, never a crash")
    func hostile() throws {
        let bomb = try Self.deflated("A", repeated: 20_000_000)
        #expect(bomb.count < 40_000)
        #expect(throws: Inflate.Failure(description: "inflates to more than 1048576 bytes")) { try Inflate.raw(bomb, limit: 1 << 20) }
        let whole = try Self.deflated("0123456789abcdef", repeated: 1000)
        #expect(throws: Inflate.Failure(description: "the compressed data is truncated")) {
            try Inflate.raw(Array(whole.prefix(whole.count / 2)), limit: 1 << 20)
        }
        #expect(throws: Inflate.Failure.self) { try Inflate.raw([0xFF, 0xFF, 0xFF, 0xFF], limit: 1 << 20) }
        #expect(throws: Inflate.Failure(description: "the compressed data is truncated")) { try Inflate.raw([], limit: 1 << 20) }
    }
}
