#!/usr/bin/env python3
"""The "Figures" table of RELIABILITY.md, generated from the repository.

    Scripts/reliability-figures.py                      print the Markdown table
    Scripts/reliability-figures.py --check [FILE]       exit 1 if FILE's table differs (default RELIABILITY.md)
    Scripts/reliability-figures.py --write [FILE]       regenerate FILE's table in place

Every figure is read from the tests, the fuzz corpus or `.ci/run` — how many rounds a test runs,
how many inputs it replays, how many `@Test` functions there are — never typed by hand; what a
run measures (times, counts that vary from run to run) is not in the table: the tests print it.
The table is the text between `<!-- figures:begin -->` and `<!-- figures:end -->`. A pattern
that no longer matches its file fails loudly: fix the pattern here, then `--write`.
Standard library only.
"""
import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- figures:begin -->", "<!-- figures:end -->"


def source(path):
    return (ROOT / path).read_text(encoding="utf-8")


def number(path, pattern):
    """The first group of `pattern` in the file, as an integer (underscores allowed)."""
    match = re.search(pattern, source(path), re.S)
    if not match:
        sys.exit(f"reliability-figures.py: /{pattern}/ no longer matches {path}")
    return int(match.group(1).replace("_", ""))


def count(path, pattern, item):
    """How many times `item` occurs in the first group of `pattern` (a list literal)."""
    match = re.search(pattern, source(path), re.S)
    if not match:
        sys.exit(f"reliability-figures.py: /{pattern}/ no longer matches {path}")
    return len(re.findall(item, match.group(1)))


def files(directory, prefix=""):
    return sum(1 for f in (ROOT / directory).iterdir() if f.is_file() and f.name.startswith(prefix))


def tests():
    return sum(len(re.findall(r"^\s*@Test\b", f.read_text(encoding="utf-8"), re.M))
               for f in sorted((ROOT / "Tests").rglob("*.swift")))


def n(value):
    return f"{value:,}"


def table():
    crash = "Tests/StrataTests/Reliability/CrashTests.swift"
    faults = "Tests/StrataTests/Reliability/FaultInjectionTests.swift"
    reentrancy = "Tests/StrataTests/Reliability/ReentrancyTests.swift"
    model = "Tests/StrataTests/Properties/ModelBasedTests.swift"
    transfers = "Tests/StrataTests/Reliability/TransferInvariantTests.swift"
    prepared = "Tests/StrataTests/Context/PreparedMergeTests.swift"
    ci = ".ci/run"
    quoted = r'"[^"]*"'

    modes = count(crash, r"arguments: \[([^\]]*)\]\)\s*func killedAtRandomMoments", quoted)
    rounds = number(crash, r"static let rounds = ([\d_]+)")
    per_batch = number(crash, r"static let perBatch = ([\d_]+)")
    steps = count(crash, r"arguments: \[([^\]]*)\]\)\s*func killedWhileWritingASnapshot", quoted)
    byte_changes = number("Tests/StrataTests/Snapshot/FirstScreenTests.swift",
                          r"func anyChangedByteIsRefused\(\).*?for _ in 0\.\.<([\d_]+)")
    corpus = files("Fuzz/Corpus/snapshot")
    crashes = files("Fuzz/Corpus/snapshot", "crash-")
    predicates = files("Fuzz/Corpus/predicate")
    fuzz_targets = count(ci, r"for target in ([a-z ]+); do\s+name=\"Fuzz", r"[a-z]+")
    fuzz_seconds = number(ci, r"-max_total_time=(\d+)")
    sequences = number(model, r"static let sequences = ([\d_]+)")
    operations = number(model, r"for step in 0\.\.<([\d_]+)")
    model_workers = number(model, r"let workers = \(0\.\.<(\d+)\)\.map")
    transfer_workers = number(transfers, r"let workers = (\d+), transfersEach = [\d_]+")
    transfers_each = number(transfers, r"let workers = \d+, transfersEach = ([\d_]+)")
    two_process = number(faults, r"func twoProcessesWrite\w*\(\).*?let count = ([\d_]+)")
    allowed = count(reentrancy, r"static let allowed = \[(.*?)\]\n", quoted)
    refused = count(reentrancy, r"static let refused: [^=]*= \[(.*?)\n    \]", r'\(\s*"')
    timeout = number(reentrancy, r"probe\.exited\(seconds: (\d+)\)")
    cancel_commits = number("Tests/StrataTests/Store/CancellationTests.swift", r"for index in 0\.\.<([\d_]+) \{\n")
    wal_commits = number(faults, r"try await commit\(([\d_]+)\) \{ index in")
    wal_within = number(faults, r"#expect\(firstBounded < (\d+)")
    wal_limit = number("Sources/Strata/Store/StoreConfiguration.swift",
                       r"journalSizeLimit: Int\? = (\d+) \* 1024 \* 1024") 
    merge_objects = number(prepared, r"for index in 0\.\.<([\d_]+) \{ try worker\.insert")
    merge_bound = number(prepared, r"generousJobBound = Duration\.milliseconds\((\d+)\)")

    rows = [
        ("processes killed at random moments during saves (`CrashTests`)",
         f"{n(rounds)} kills per mode × {modes} modes (NORMAL, FULL); batches of {per_batch} objects",
         "0 acknowledged batches lost, 0 partial"),
        ("processes killed during snapshot writes (`CrashTests`)", f"{steps} steps of the atomic write",
         "0 warm starts older than the database"),
        ("snapshots with one byte changed (`FirstScreenTests`)", f"{n(byte_changes)} seeded positions per run",
         "0 accepted"),
        ("fuzz corpus replayed by every test run", f"{corpus} snapshot inputs ({crashes} of them, `crash-*`, found by "
         f"the fuzzer), each as is and repaired; {predicates} `--where` inputs", "0 partial loads, 0 traps"),
        ("libFuzzer in `.ci/run`", f"{fuzz_seconds} s per target × {fuzz_targets} targets (snapshot decoder, "
         "`--where` parser), a new seed each run", "0 crashes, 0 hangs"),
        ("model-based sequences (`ModelBasedTests`)",
         f"{n(sequences)} × {operations} operations, main context and {model_workers} workers", "0 diverged"),
        ("concurrent transfers (`TransferInvariantTests`)", f"{transfer_workers} workers × {transfers_each} transfers",
         "0 changes of the total"),
        ("merges prepared off the main actor (`PreparedMergeTests`)", f"a {n(merge_objects)}-object change set",
         f"0 main-actor jobs over {merge_bound} ms"),
        ("two processes writing one file (`FaultInjectionTests`)", f"{n(two_process)} change sets each",
         "0 `busy` errors reaching a caller"),
        ("reentrant patterns in a child process (`ReentrancyTests`)",
         f"{allowed} allowed + {refused} forbidden, killed after {timeout} s", "0 hangs, 0 wrong outcomes, "
         "0 half-done refusals"),
        ("fetches cancelled around commits (`CancellationTests`)", f"{n(cancel_commits)} commits",
         "0 commits disturbed"),
        ("WAL growth with a pinned reader (`FaultInjectionTests`)", f"{n(wal_commits)} commits while it reads",
         f"back under the {wal_limit} MiB limit within {wal_within} commits of its release; empty after `TRUNCATE`"),
        ("I/O faults injected (`FaultInjectionTests`)", "every read, WAL write and fsync of a save; once and "
         "persistent; I/O error and disk full; statement journals kept in memory (`temp_store = MEMORY`), "
         "checked unwritten", "0 silent, 0 lost"),
        ("whole suite under AddressSanitizer + LeakSanitizer (`.ci/run`)",
         f"{n(tests())} `@Test` functions, and every probe and CLI child they start", "0 memory errors, 0 leaks"),
    ]
    lines = ["| what | how much | a passing run shows |", "|---|---|---|"]
    lines += [f"| {what} | {much} | {shows} |" for what, much, shows in rows]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 if FILE's table is not the generated one")
    mode.add_argument("--write", action="store_true", help="replace FILE's table with the generated one")
    parser.add_argument("file", nargs="?", type=Path, default=ROOT / "RELIABILITY.md")
    arguments = parser.parse_args()

    generated = table()
    if not (arguments.check or arguments.write):
        sys.stdout.write(generated)
        return
    text = arguments.file.read_text(encoding="utf-8")
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        sys.exit(f"reliability-figures.py: {arguments.file} needs one {BEGIN} line followed by one {END} line")
    head, rest = text.split(BEGIN + "\n", 1)
    body, tail = rest.split(END, 1)
    if arguments.write:
        arguments.file.write_text(head + BEGIN + "\n" + generated + END + tail, encoding="utf-8")
    elif body != generated:
        sys.stderr.write(f"reliability-figures.py: the figures in {arguments.file} are stale; "
                         f"run Scripts/reliability-figures.py --write\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
