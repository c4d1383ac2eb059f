import Foundation
import FuzzDriver
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

/// The entry point SwiftPM expects of this executable (FuzzDriver).
@_cdecl("FuzzPush_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in data.map { fuzzPush($0, size) } ?? 0 }
}
