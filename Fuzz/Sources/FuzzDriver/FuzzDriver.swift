// libFuzzer's driver, for every fuzz target of this package. SwiftPM renames an executable's
// `main` to `<Target>_main`, which rules out libFuzzer's own `main`: each target exports that
// symbol (built with `-parse-as-library`) and calls `runLibFuzzer` from it.

@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// Runs libFuzzer with the process's arguments, calling `callback` with each input.
public func runLibFuzzer(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments, callback)
}
