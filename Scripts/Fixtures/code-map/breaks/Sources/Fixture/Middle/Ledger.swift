/// Middle/ uses Base/, as its row allows.
struct Ledger {
    var store = Store()
}
