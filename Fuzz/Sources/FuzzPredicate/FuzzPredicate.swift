import FuzzDriver
@_spi(Fuzzing) import StrataCLICore

/// One fuzz input for the `strata query --where` parser: any text must parse or be rejected with
/// a syntax error, never trap. Exported under libFuzzer's name too.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzPredicate(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = PredicateFuzzing.parse(String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self))
    return 0
}

/// The entry point SwiftPM expects of this executable (FuzzDriver).
@_cdecl("FuzzPredicate_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in data.map { fuzzPredicate($0, size) } ?? 0 }
}
