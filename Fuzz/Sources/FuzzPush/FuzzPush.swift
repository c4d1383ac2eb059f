import Foundation
@_spi(Fuzzing) import StrataSyncWire

/// One fuzz input for the sync service's push decoder: any bytes are accepted or refused with
/// the protocol's typed error, never a trap (`PushFuzzing.check`). Exported under libFuzzer's
/// name too.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzPush(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if case .broken(let reason) = PushFuzzing.check(Data(bytes: data, count: size)) {
        fatalError(reason)
    }
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The entry point SwiftPM expects of this executable (see FuzzSnapshot/FuzzerEntry.swift).
@_cdecl("FuzzPush_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in
        guard let data else { return 0 }
        return fuzzPush(data, size)
    }
}
