/// A loaded section: one entity's objects as a checked block, ready for whatever holds objects
/// (a context's graph; the archive does not know who).
struct LoadedSection: Sendable {
    let block: ColumnBlock
    var count: Int { block.count }
}
