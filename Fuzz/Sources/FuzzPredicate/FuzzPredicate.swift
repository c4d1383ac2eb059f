@_spi(Fuzzing) import StrataCLICore

/// One fuzz input for the `strata query --where` parser: any text must parse or be rejected with
/// a syntax error, never trap. Exported under libFuzzer's name too.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzPredicate(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = PredicateFuzzing.parse(String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self))
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The entry point SwiftPM expects of this executable (see FuzzSnapshot/FuzzerEntry.swift).
@_cdecl("FuzzPredicate_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in
        guard let data else { return 0 }
        return fuzzPredicate(data, size)
    }
}
