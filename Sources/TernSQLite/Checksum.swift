import CSQLite

/// How a column converts the values stored into it: SQLite's type affinity ("Datatypes In
/// SQLite", §3), worked out from the declared type with SQLite's own rules.
public enum ColumnAffinity: Character, Sendable {
    case text = "T"
    /// NUMERIC and INTEGER affinity: they store the same values.
    case numeric = "N"
    case real = "R"
    case blob = "B"

    /// The affinity SQLite gives a column declared as `declaredType`: tested for INT, then CHAR/CLOB/TEXT,
    /// then BLOB (or no type), then REAL/FLOA/DOUB, else NUMERIC; case does not matter.
    public init(declaredType: String) {
        let type = declaredType.uppercased()
        if type.contains("INT") {
            self = .numeric
        } else if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") {
            self = .text
        } else if type.isEmpty || type.contains("BLOB") {
            self = .blob
        } else if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") {
            self = .real
        } else {
            self = .numeric
        }
    }
}

extension Connection {
    /// Which hash `tern_checksum` computes. Changed whenever the hash changes, so that checksums
    /// kept by another Tern (a run's record, a resume's cache) are told apart, never compared.
    public static let checksumScheme = 2

    /// Registers the aggregate `tern_checksum(affinities, value, …)`: an order-independent 64-bit
    /// checksum of a set of rows, the wrapping sum of a hash of each row's values.
    ///
    /// `affinities` holds one `ColumnAffinity` character per value: each value is hashed as a
    /// column of that affinity would store it, so the checksum of values about to be inserted
    /// equals the checksum of the same values read back from their columns (a real 3.0 in an
    /// INTEGER column is the integer 3; the integer 7 in a VARCHAR column is the text '7'). Equal
    /// numbers hash equal whatever their storage class. Comparing two checksums reads each side
    /// once, sequentially, in any order — no join. The hash is for finding mistakes, not for
    /// resisting an adversary.
    public func registerChecksum() throws {
        let code = sqlite3_create_function_v2(
            try openHandle(), "tern_checksum", -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, nil,
            { context, count, values in
                guard let sum = sqlite3_aggregate_context(context, Int32(MemoryLayout<UInt64>.size))?.assumingMemoryBound(to: UInt64.self) else {
                    sqlite3_result_error_nomem(context)
                    return
                }
                sum.pointee &+= RowHash.of(Int(count), values)
            },
            { context in
                let sum = sqlite3_aggregate_context(context, 0)?.assumingMemoryBound(to: UInt64.self).pointee ?? 0
                sqlite3_result_int64(context, Int64(bitPattern: sum))
            }, nil)
        guard code == SQLITE_OK else {
            throw SQLiteError(code: code, connection: handle, sql: "function tern_checksum")
        }
        // One row's hash of some of its values: how a row of more values than a function takes
        // (127) is checksummed, a hash per chunk (`ChecksumArguments`).
        let rowHash = sqlite3_create_function_v2(
            try openHandle(), "tern_row_hash", -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, count, values in
                sqlite3_result_int64(context, Int64(bitPattern: RowHash.of(Int(count), values)))
            }, nil, nil, nil)
        guard rowHash == SQLITE_OK else {
            throw SQLiteError(code: rowHash, connection: handle, sql: "function tern_row_hash")
        }
        let ranked = sqlite3_create_function_v2(
            try openHandle(), RankedChecksum.name, -1, SQLITE_UTF8, nil, nil,
            { context, count, values in RankedChecksum.step(context, Int(count), values) },
            { context in
                let state = sqlite3_aggregate_context(context, 0)?.assumingMemoryBound(to: RankedChecksum.State.self).pointee
                sqlite3_result_int64(context, Int64(bitPattern: state?.sum ?? 0))
            }, nil)
        guard ranked == SQLITE_OK else {
            throw SQLiteError(code: ranked, connection: handle, sql: "function \(RankedChecksum.name)")
        }
    }
}

/// `tern_ranked_checksum(affinities, slot, keys, partition, key₁ … keyₖ, value, …)`: what
/// `tern_checksum(affinities, value, …)` gives when the value at `slot` (counted from 0) is
/// `row_number() OVER (PARTITION BY partition ORDER BY key₁, …, keyₖ)`, for rows that come in
/// that order (a FROM subquery's `ORDER BY partition, key₁, …, keyₖ`, which SQLite keeps under
/// an aggregate it does not know; `LIMIT -1` would keep it too, but sorts into a b-tree, four
/// times slower; the value passed at `slot` is ignored). The window keeps every row of a
/// partition in a table of its own, and a list's partitions are mostly a link or two: ranking rows as they come costs a sort alone
/// (750,000 links: half the time). The order rows come in is the query plan's to decide, so a
/// row not strictly after the one before it (an integer partition, then keys that are integers
/// or NULL, NULL first, as SQLite sorts) fails the query (`isOutOfOrder`): the caller ranks
/// with the window instead.
public enum RankedChecksum {
    /// The function's name in SQL.
    public static let name = "tern_ranked_checksum"
    private static let outOfOrder = "tern_ranked_checksum: rows out of partition and key order"
    private static let misused = "tern_ranked_checksum: wrong arguments"
    /// Keys a rank may be ordered by.
    public static let mostKeys = 4

    /// Whether `error` is this function refusing a row out of order.
    public static func isOutOfOrder(_ error: any Error) -> Bool {
        (error as? SQLiteError)?.message.contains(outOfOrder) == true
    }

    /// One evaluation's running state, in SQLite's aggregate context (zeroed when made).
    struct State {
        var sum: UInt64
        var rows: Int64
        var rank: Int64
        var partition: Int64
        /// The previous row's keys: NULL where `nulls` has the key's bit.
        var keys: (Int64, Int64, Int64, Int64)
        var nulls: UInt8
    }

    fileprivate static func step(_ context: OpaquePointer?, _ count: Int, _ values: UnsafeMutablePointer<OpaquePointer?>?) {
        guard let values, count >= 4 else {
            sqlite3_result_error(context, misused, -1)
            return
        }
        guard let state = sqlite3_aggregate_context(context, Int32(MemoryLayout<State>.size))?.assumingMemoryBound(to: State.self) else {
            sqlite3_result_error_nomem(context)
            return
        }
        let slot = Int(sqlite3_value_int64(values[1]))
        let keyCount = Int(sqlite3_value_int64(values[2]))
        let firstValue = 4 + keyCount
        // Not a matter of order: a query built wrong, which no window would mend.
        guard (0...mostKeys).contains(keyCount), firstValue <= count, (0..<(count - firstValue)).contains(slot) else {
            sqlite3_result_error(context, misused, -1)
            return
        }
        guard sqlite3_value_type(values[3]) == SQLITE_INTEGER,
            let rank = advance(&state.pointee, partition: sqlite3_value_int64(values[3]), keys: values.advanced(by: 4), keyCount)
        else {
            sqlite3_result_error(context, outOfOrder, -1)
            return
        }
        state.pointee.sum &+= RowHash.of(affinities: values[0], values.advanced(by: firstValue), count - firstValue, substituting: slot, with: rank)
    }

    /// Takes the next row into `state`: its rank, one after the previous row's in its
    /// partition, else 1. Nil when the row does not come strictly after the previous one.
    private static func advance(_ state: inout State, partition: Int64, keys: UnsafeMutablePointer<OpaquePointer?>, _ count: Int) -> Int64? {
        // Each key against the previous row's (NULL first, as SQLite sorts), which it then
        // replaces: a row refused fails the query, so what it leaves in `state` is never read.
        let previousNulls = state.nulls
        var nulls: UInt8 = 0
        var order = 0
        let read = withUnsafeMutableBytes(of: &state.keys) { bytes in
            let stored = bytes.bindMemory(to: Int64.self)
            for index in 0..<count {
                let wasNull = previousNulls & (1 << index) != 0
                switch sqlite3_value_type(keys[index]) {
                case SQLITE_NULL:
                    nulls |= 1 << index
                    if order == 0, !wasNull { order = -1 }
                case SQLITE_INTEGER:
                    let key = sqlite3_value_int64(keys[index])
                    if order == 0 { order = wasNull || key > stored[index] ? 1 : key == stored[index] ? 0 : -1 }
                    stored[index] = key
                default:
                    return false
                }
            }
            return true
        }
        state.nulls = nulls
        guard read else { return nil }
        if state.rows > 0 && partition == state.partition {
            guard order == 1 else { return nil }
            state.rank += 1
        } else {
            guard state.rows == 0 || partition > state.partition else { return nil }
            state.rank = 1
        }
        state.rows += 1
        state.partition = partition
        return state.rank
    }
}

/// The arguments of `tern_checksum` for a row of any width: SQLite passes a function at most 127
/// arguments, so a row of more values is hashed in chunks (`tern_row_hash`), and the checksum
/// taken over the chunks' hashes. Both sides of a comparison build their arguments here, so
/// they chunk alike.
public enum ChecksumArguments {
    /// Values per chunk: under SQLite's limit with room for the affinities.
    public static let chunk = 100

    /// `'affinities', value, …` for `tern_checksum(…)`, `values` being SQL in the order of
    /// `affinities`' characters; `join` concatenates SQL pieces (text, or a fragment with its
    /// bound arguments).
    public static func of<Piece>(affinities: String, values: [Piece], text: (String) -> Piece, join: ([Piece]) -> Piece) -> Piece {
        let codes = Array(affinities)
        guard values.count > chunk else {
            return join([text(quote(affinities))] + values.flatMap { [text(", "), $0] })
        }
        let hashes = stride(from: 0, to: values.count, by: chunk).map { start in
            let end = min(start + chunk, values.count)
            return join([text("tern_row_hash(" + quote(String(codes[start..<end])))] + values[start..<end].flatMap { [text(", "), $0] } + [text(")")])
        }
        return join([text(quote(String(repeating: "N", count: hashes.count)))] + hashes.flatMap { [text(", "), $0] })
    }

    /// The same for values that are plain SQL text.
    public static func of(affinities: String, values: [String]) -> String {
        of(affinities: affinities, values: values, text: { $0 }, join: { $0.joined() })
    }

    private static func quote(_ text: String) -> String { "'" + text + "'" }
}

/// The hash of one row: its values hashed in order, each as its column's affinity stores it.
///
/// Each value is framed — a word of its kind and length, then its content eight bytes at a time —
/// and each word is absorbed into one running state by a xor and a full-width multiplication by
/// an odd constant whose two halves are folded together (as wyhash does): the carries into the
/// high half make every bit of the word reach every bit of the state, so a difference in one
/// word cannot be cancelled by a fixed difference in the next (a plain multiplication carries
/// its top bit nowhere: two edits 30 bits apart then hashed alike). The state goes through
/// SplitMix64's finalizer once per row, not once per word: measured on the 4M-object
/// benchmark, the finalizer after every value and word made the hash a quarter of a scan's time.
private enum RowHash {
    /// `values[0]` the affinities, the row's values after it.
    static func of(_ count: Int, _ values: UnsafeMutablePointer<OpaquePointer?>?) -> UInt64 {
        guard count > 0, let values else { return 0 }
        return of(affinities: values[0], values.advanced(by: 1), count - 1)
    }

    /// The hash of `count` values, the one at `slot` (if any) taken to be the integer `rank`.
    static func of(
        affinities text: OpaquePointer?, _ values: UnsafeMutablePointer<OpaquePointer?>, _ count: Int, substituting slot: Int = -1, with rank: Int64 = 0
    ) -> UInt64 {
        let codes = sqlite3_value_text(text)
        let known = codes == nil ? 0 : Int(sqlite3_value_bytes(text))
        var state = State()
        for index in 0..<count {
            let affinity = index < known ? codes![index] : UInt8(ascii: "B")
            if index == slot {
                substitute(rank, affinity: affinity, into: &state)
            } else {
                value(values[index], affinity: affinity, into: &state)
            }
        }
        return state.finished
    }

    /// The running state of one row's hash.
    private struct State {
        var word: UInt64 = 0x9E37_79B9_7F4A_7C15

        mutating func absorb(_ input: UInt64) {
            let product = (word ^ input).multipliedFullWidth(by: 0x9E37_79B9_7F4A_7C15)
            word = product.high ^ product.low
        }

        /// The frame of a value: its kind, and the length of its bytes.
        mutating func frame(_ kind: Kind, length: Int = 0) {
            absorb(kind.rawValue | UInt64(length) << 8)
        }

        mutating func integer(_ value: Int64) {
            frame(.integer)
            absorb(UInt64(bitPattern: value))
        }

        /// A real holding a whole number hashes as that integer: columns convert between the two.
        mutating func number(_ value: Double) {
            if let whole = Int64(exactly: value) { return integer(whole) }
            frame(.real)
            absorb(value.bitPattern)
        }

        /// `count` bytes at `start`, eight at a time; the last word is the last eight bytes,
        /// overlapping the one before (the frame holds the length, so no two contents read alike).
        mutating func bytes(_ start: UnsafeRawPointer?, _ count: Int, kind: Kind) {
            frame(kind, length: count)
            guard let start, count > 0 else { return }
            guard count >= 8 else {
                var tail: UInt64 = 0
                for index in 0..<count { tail = tail << 8 | UInt64(start.load(fromByteOffset: index, as: UInt8.self)) }
                return absorb(tail)
            }
            var offset = 0
            while offset + 8 <= count {
                absorb(start.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset += 8
            }
            if offset < count { absorb(start.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)) }
        }

        /// SplitMix64's finalizer: every bit of the state affects every bit of the hash.
        var finished: UInt64 {
            var z = word &+ 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// What a value's frame says it is.
    private enum Kind: UInt64 {
        case null = 0x6E
        case integer = 1
        case real = 2
        case text = 3
        case blob = 4
    }

    /// An integer as `value` hashes it when SQLite passes it.
    private static func substitute(_ rank: Int64, affinity: UInt8, into state: inout State) {
        switch affinity {
        case UInt8(ascii: "T"):
            var text = String(rank)
            text.withUTF8 { state.bytes($0.baseAddress.map(UnsafeRawPointer.init), $0.count, kind: .text) }
        case UInt8(ascii: "R"): state.number(Double(rank))
        default: state.integer(rank)
        }
    }

    private static func value(_ value: OpaquePointer?, affinity: UInt8, into state: inout State) {
        var type = sqlite3_value_type(value)
        switch affinity {
        case UInt8(ascii: "T") where type == SQLITE_INTEGER || type == SQLITE_FLOAT:
            type = SQLITE_TEXT  // SQLite's own rendering, as the column would store it
        case UInt8(ascii: "N") where type == SQLITE_TEXT, UInt8(ascii: "R") where type == SQLITE_TEXT:
            type = sqlite3_value_numeric_type(value)
        default:
            break
        }
        if affinity == UInt8(ascii: "R"), type == SQLITE_INTEGER {
            return state.number(Double(sqlite3_value_int64(value)))
        }
        switch type {
        case SQLITE_INTEGER: state.integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: state.number(sqlite3_value_double(value))
        case SQLITE_TEXT: state.bytes(sqlite3_value_text(value).map(UnsafeRawPointer.init), Int(sqlite3_value_bytes(value)), kind: .text)
        case SQLITE_BLOB: state.bytes(sqlite3_value_blob(value), Int(sqlite3_value_bytes(value)), kind: .blob)
        default: state.frame(.null)
        }
    }
}
