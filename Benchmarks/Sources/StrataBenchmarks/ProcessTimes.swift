import Foundation

/// The CPU time this process has spent, in user code and in the kernel, and the page faults it
/// has taken (`getrusage`, every thread): read around a timed region, the difference says where a
/// slow repetition's time went. A warm start's kernel time is mostly faulting in fresh memory,
/// and on a virtual machine the cost of the same faults varies widely with how the host backs the
/// guest's memory, which no instruction count sees.
struct ProcessTimes {
    /// User-mode CPU time, milliseconds.
    let user: Double
    /// Kernel-mode CPU time, milliseconds.
    let system: Double
    /// Page faults served without I/O.
    let minorFaults: Int

    /// The process's totals so far.
    static func now() -> ProcessTimes {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return ProcessTimes(user: 0, system: 0, minorFaults: 0) }
        func milliseconds(_ time: timeval) -> Double { Double(time.tv_sec) * 1000 + Double(time.tv_usec) / 1000 }
        return ProcessTimes(user: milliseconds(usage.ru_utime), system: milliseconds(usage.ru_stime),
                            minorFaults: usage.ru_minflt)
    }

    /// What a repetition's log line says of it.
    var description: String {
        String(format: "user %.1f, kernel %.1f ms, %ld page faults", user, system, minorFaults)
    }

    /// Records the medians of `times` (one per repetition of Strata's region), and the kernel's
    /// longest, in `result`'s details.
    static func record(_ times: [ProcessTimes], in result: inout ScenarioResult) {
        result.details["strata CPU ms in user code, median (every thread)"] = Statistics(times.map(\.user))?.median
        let kernel = Statistics(times.map(\.system))
        result.details["strata CPU ms in the kernel, median (mostly fresh memory faulted in)"] = kernel?.median
        result.details["strata CPU ms in the kernel, max"] = kernel?.max
    }

    /// What was spent between `earlier` and this reading.
    func since(_ earlier: ProcessTimes) -> ProcessTimes {
        ProcessTimes(user: user - earlier.user, system: system - earlier.system,
                     minorFaults: minorFaults - earlier.minorFaults)
    }
}
