/// Top/ extends a type of Middle/, which its row allows, and adds a member to it.
extension Ledger {
    var topCount: Int { 1 }
}
