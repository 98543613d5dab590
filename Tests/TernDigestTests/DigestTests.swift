import Foundation
import Testing
import TernDigest

/// The system's SHA-2 against the published test vectors (FIPS 180-2's "abc" and two-block
/// messages, the empty message), fed whole and in pieces, with a running digest copied midway.
@Suite("SHA-256 and SHA-512 from libcrypto")
struct DigestTests {
    static let twoBlocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"

    @Test("SHA-256: the empty message, abc, and the two-block message")
    func sha256() {
        #expect(SHA256.hash(data: Data()).description == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hash(data: Data("abc".utf8)).description == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hash(data: Array(Self.twoBlocks.utf8)).description == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test("SHA-512: abc")
    func sha512() {
        #expect(
            SHA512.hash(data: Data("abc".utf8)).description
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
    }

    @Test("fed in pieces, and copied midway: each copy finishes its own bytes")
    func running() {
        var running = SHA256()
        running.update(data: Data("ab".utf8))
        var copy = running
        running.update(data: Data("c".utf8))
        copy.update(data: Data("x".utf8))
        #expect(running.finalize() == SHA256.hash(data: Data("abc".utf8)))
        #expect(copy.finalize() == SHA256.hash(data: Data("abx".utf8)))
        // Finishing leaves the running digest as it was.
        running.update(data: Data())
        #expect(running.finalize().bytes.count == 32)
        #expect(Array(SHA512.hash(data: Data()).prefix(2)) == [0xcf, 0x83])
    }
}
