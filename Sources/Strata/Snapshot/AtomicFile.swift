import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("AtomicFile needs a POSIX C library: Glibc, Musl or Darwin")
#endif

/// The steps of an atomic snapshot write, where a crash test can stop it as a crash would.
@_spi(Testing)
public enum SnapshotWriteStep: String, Sendable, CaseIterable {
    case temporaryWritten, temporarySynced, renamed
}

/// Atomic file replacement: temporary file, fsync, rename, fsync of the directory. A crash at
/// any step leaves the old file or the new one, never a torn one. Every POSIX call goes through
/// ``check(_:_:path:)``.
enum AtomicFile {
    static func check(_ result: Int32, _ what: String, path: String) throws {
        guard result < 0 else { return }
        let code = errno
        let reason = String(cString: strerror(code))
        let kind: StrataError.Code = code == ENOSPC || code == EDQUOT ? .diskFull
            : (code == ENOENT || code == EACCES || code == EROFS || code == ENOTDIR ? .cannotOpen : .ioError)
        throw StrataError(kind, "\(what) failed: \(reason)", path: path)
    }

    /// Writes `parts` to `path` atomically. `stopAfter` simulates a crash after that step.
    static func write(_ parts: [Data], to path: String, stopAfter: SnapshotWriteStep? = nil) throws {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try check(descriptor, "creating \(temporary)", path: temporary)
        var closed = false
        defer { if !closed { close(descriptor) } }
        do {
            for part in parts {
                try part.withUnsafeBytes { bytes in
                    var written = 0
                    while written < bytes.count {
                        let result = posixWrite(descriptor, bytes.baseAddress! + written, bytes.count - written)
                        if result < 0, errno == EINTR { continue }
                        try check(Int32(clamping: result), "writing the snapshot", path: temporary)
                        written += result
                    }
                }
            }
            if stopAfter == .temporaryWritten { return }
            try check(fsync(descriptor), "fsync of the snapshot", path: temporary)
            closed = true
            try check(close(descriptor), "closing the snapshot", path: temporary)
            if stopAfter == .temporarySynced { return }
            try check(rename(temporary, path), "renaming the snapshot into place", path: path)
        } catch {
            unlink(temporary)
            throw error
        }
        if stopAfter == .renamed { return }
        let directoryDescriptor = open(directory, O_RDONLY)
        try check(directoryDescriptor, "opening the snapshot's directory", path: directory)
        defer { close(directoryDescriptor) }
        try check(fsync(directoryDescriptor), "fsync of the snapshot's directory", path: directory)
    }
}

/// `write(2)` from whichever C library is imported above: inside ``AtomicFile`` the name
/// `write` is its own method, and a module-qualified `Glibc.write` would not build elsewhere.
private func posixWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
