import FuzzDriver

/// The entry point SwiftPM expects of this executable (FuzzDriver); `--write-seed PATH` writes
/// the corpus's valid seed instead of fuzzing.
@_cdecl("FuzzSnapshot_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    if argc == 3, let flag = argv?[1], String(cString: flag) == "--write-seed", let path = argv?[2] {
        return writeSeed(to: String(cString: path))
    }
    return runLibFuzzer(argc, argv) { data, size in data.map { fuzzSnapshot($0, size) } ?? 0 }
}
