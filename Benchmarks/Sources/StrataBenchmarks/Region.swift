import CCallgrindBench

/// One peer's timed region in a scenario, named as callgrind's dumps describe it
/// ("P1 strata objects=5000"). Under callgrind the counters of every thread are zeroed as the
/// region starts and dumped, labelled, as it ends, so a dump counts exactly the timed work —
/// setup and checks excluded — and `Scripts/instructions.sh` divides it by `objects`.
/// Outside valgrind the markers cost a few instructions.
struct Region: Sendable {
    let scenario: String
    let peer: Peer
    let objects: Int

    init(_ scenario: String, _ peer: Peer, objects: Int) {
        self.scenario = scenario
        self.peer = peer
        self.objects = objects
    }

    var label: String { "\(scenario) \(peer.rawValue) objects=\(objects)" }

    func begin() { bench_callgrind_zero() }
    func end() { bench_callgrind_dump(label) }
}
