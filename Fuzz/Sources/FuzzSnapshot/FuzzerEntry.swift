import Foundation

// libFuzzer's driver, started from the entry point SwiftPM expects of this executable
// (SwiftPM renames an executable's `main` to `<Target>_main`, which rules out libFuzzer's own
// `main`). Build with `-parse-as-library`, so that this file provides the entry point.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

@_cdecl("FuzzSnapshot_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    if argc == 3, let flag = argv?[1], String(cString: flag) == "--write-seed", let path = argv?[2] {
        return writeSeed(to: String(cString: path))
    }
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in
        guard let data else { return 0 }
        return fuzzSnapshot(data, size)
    }
}
