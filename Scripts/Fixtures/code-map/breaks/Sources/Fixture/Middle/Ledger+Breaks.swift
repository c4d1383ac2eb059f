/// Two references the map forbids, neither of which names a type of the folder it reaches.
extension Ledger {
    /// Middle/ reads a member that Top/ adds (in `extension Ledger`): Middle may not use Top.
    var total: Int { topCount + store.count }
}
