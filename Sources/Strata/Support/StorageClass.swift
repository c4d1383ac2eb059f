/// SQLite's storage classes, numbered as a cell's tag byte is (``CellTag``: a column's cells, a
/// snapshot chunk's bytes): the one place their numbering, their order in comparisons and their
/// `typeof()` names are written.
///
/// Text and blobs come last, so a tag at or above ``text``'s is a cell whose payload points at
/// bytes.
enum StorageClass: UInt8, CaseIterable, Sendable {
    case null = 0
    case integer = 1
    case real = 2
    case text = 3
    case blob = 4

    /// Where values of this class come in SQLite's order of values (the BINARY collation,
    /// `ORDER BY`): NULL, then numbers — integers and reals together, compared by value — then
    /// text, then blobs.
    var rank: Int { Self.rank(ofTag: rawValue) }

    /// The ``rank`` of the class whose raw value is `tag`, read straight off a cell's tag byte:
    /// one subtraction, no switch, for comparisons of cells in a sort.
    @inline(__always)
    static func rank(ofTag tag: UInt8) -> Int { Int(tag) - (tag > integer.rawValue ? 1 : 0) }

    /// The class's name as SQL's `typeof()` returns it.
    var name: String {
        switch self {
        case .null: return "null"
        case .integer: return "integer"
        case .real: return "real"
        case .text: return "text"
        case .blob: return "blob"
        }
    }
}

/// A set of storage classes, one bit per class (bit `n` for the class whose raw value is `n`):
/// what an attribute admits (``AttributeSchema/admittedClasses``), checked against a cell's tag
/// with a shift.
struct StorageClasses: Sendable, Hashable {
    /// Bit `n` set: the class whose raw value is `n` is in the set. Bits past ``StorageClass/blob`` are never set.
    let bits: UInt8

    init(_ classes: some Sequence<StorageClass>) {
        bits = classes.reduce(0) { $0 | 1 << $1.rawValue }
    }

    func contains(_ storageClass: StorageClass) -> Bool { contains(tag: storageClass.rawValue) }

    /// Whether a cell tagged `tag` is of a class in the set; false for a byte that is no tag.
    @inline(__always)
    func contains(tag: UInt8) -> Bool { bits >> tag & 1 == 1 }
}

/// The storage class numbers take in a column, as SQLite's affinity makes them: an INTEGER
/// column stores an integral real as an integer, a REAL column stores an integer as a real, and
/// any other keeps them as they are.
///
/// Values SQLite considers equal — `1` and `1.0` — become one value here
/// (``normalized(tag:payload:)``), so that they hash and look up as one key: in a hash index, a
/// sorted index's equality run, a lookup of primary keys and an `IN` list.
enum NumberClass: Sendable {
    case integer, real, none

    /// The number a cell holds (`tag` and `payload`, as a ``Column`` keeps them) as a column of
    /// this class stores it; any other cell as it is. The one rule, for values
    /// (``DatabaseValue/normalized(_:)``) and key cells (``KeyProbe/normalized(_:)``) alike.
    @inline(__always)
    func normalized(tag: UInt8, payload: UInt64) -> (tag: UInt8, payload: UInt64) {
        switch (self, tag) {
        case (.integer, StorageClass.real.rawValue):
            guard let integer = Int64(exactly: Double(bitPattern: payload)) else { return (tag, payload) }
            return (StorageClass.integer.rawValue, UInt64(bitPattern: integer))
        case (.real, StorageClass.integer.rawValue):
            return (StorageClass.real.rawValue, Double(Int64(bitPattern: payload)).bitPattern)
        default:
            return (tag, payload)
        }
    }
}
