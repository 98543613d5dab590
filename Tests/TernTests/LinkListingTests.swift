import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
import TernSQLite
import TernStore

/// The query verification runs for a list's links: ranked as the rows come, sorted, it gives
/// what the window functions give, on this SQLite — so the faster form is the one taken.
@Suite("Link listings ranked as rows come")
struct LinkListingTests {
    @Test("the ranked checksum of a listing equals its window checksum, for a rank of the owner's list and of the target's, with NULL and tied first keys")
    func rankedEqualsWindow() throws {
        let connection = try Connection(path: ":memory:")
        try connection.registerChecksum()
        try connection.execute(
            """
            CREATE TABLE j (a INTEGER, b INTEGER, fok INTEGER);
            WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 5000)
            INSERT INTO j SELECT k % 97, k, CASE WHEN k % 11 = 0 THEN NULL ELSE (k * 7919) % 13 END FROM n
            """)
        let listings = [
            LinkListing(owner: "j.a", target: "j.b", position: .rank(partition: "j.a", keys: ["j.fok", "j.b"]), inversePosition: .null, rows: "j j WHERE 1"),
            LinkListing(owner: "j.a", target: "j.b", position: .value("j.fok"), inversePosition: .rank(partition: "j.b", keys: ["j.a"]), rows: "j j WHERE 1"),
        ]
        for listing in listings {
            let ranked = try #require(listing.rankedChecksum)
            let fast = try connection.prepare(ranked.sql)
            #expect(try fast.step())
            let slow = try connection.prepare(listing.checksum.sql)
            #expect(try slow.step())
            #expect(fast.row.int64(at: 0) == 5000)
            #expect(fast.row.value(at: 1) == slow.row.value(at: 1), "\(ranked.sql)")
        }
        // Two ranks want two orders: only the window gives them.
        #expect(
            LinkListing(owner: "a", target: "b", position: .rank(partition: "a", keys: ["b"]), inversePosition: .rank(partition: "b", keys: ["a"]), rows: "j")
                .rankedChecksum == nil)
    }
}
