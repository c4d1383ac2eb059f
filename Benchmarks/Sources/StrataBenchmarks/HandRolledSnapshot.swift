import CLZ4Bench
import Foundation
import Strata
#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif

/// P9's reference: the snapshot a programmer would write by hand for exactly this struct —
/// fixed field order, varint-prefixed UTF-8 strings, one LZ4 frame (same frame settings as
/// Strata: 4 MiB blocks, no content checksum) and, as Strata guards each chunk, the XXH64 of the
/// frame's bytes (``Snapshot/checksum(ofChunk:)``) written after it; then write, fsync, rename,
/// fsync of the directory.
/// Single-threaded: Strata compresses its chunks on every core, this does not.
enum HandRolledSnapshot {
    struct Written {
        let uncompressedBytes: Int
        let compressedBytes: Int
    }

    static func write(_ articles: [ArticleData], to path: String) throws -> Written {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(articles.count * 360)
        func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                buffer.append(UInt8(value & 0x7F) | 0x80)
                value >>= 7
            }
            buffer.append(UInt8(value))
        }
        func string(_ text: String) {
            var text = text
            text.withUTF8 { bytes in
                varint(UInt64(bytes.count))
                buffer.append(contentsOf: bytes)
            }
        }
        varint(UInt64(articles.count))
        for article in articles {
            string(article.id)
            varint(UInt64(bitPattern: article.feedID))
            string(article.title)
            string(article.summary)
            string(article.url.absoluteString)
            withUnsafeBytes(of: article.published.timeIntervalSinceReferenceDate.bitPattern.littleEndian) {
                buffer.append(contentsOf: $0)
            }
            buffer.append((article.isRead ? 1 : 0) | (article.isStarred ? 2 : 0))
        }

        var preferences = LZ4F_preferences_t()
        preferences.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum
        preferences.frameInfo.contentSize = UInt64(buffer.count)
        preferences.frameInfo.blockSizeID = LZ4F_max4MB
        let bound = LZ4F_compressFrameBound(buffer.count, &preferences)
        var compressed = [UInt8](repeating: 0, count: bound)
        let size = compressed.withUnsafeMutableBytes { destination in
            buffer.withUnsafeBytes { source in
                LZ4F_compressFrame(destination.baseAddress, bound, source.baseAddress, source.count, &preferences)
            }
        }
        guard LZ4F_isError(size) == 0 else { throw BenchmarkError("LZ4F_compressFrame failed") }
        let checksum = compressed.withUnsafeBytes { Snapshot.checksum(ofChunk: UnsafeRawBufferPointer(rebasing: $0[0..<size])) }
        compressed.removeSubrange(size...)
        withUnsafeBytes(of: checksum.littleEndian) { compressed.append(contentsOf: $0) }
        let total = compressed.count

        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw BenchmarkError("open \(temporary): \(errno)") }
        var written = 0
        while written < total {
            let result = compressed.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress! + written, total - written) }
            guard result > 0 else {
                close(descriptor)
                throw BenchmarkError("write \(temporary): \(errno)")
            }
            written += result
        }
        guard fsync(descriptor) == 0, close(descriptor) == 0, rename(temporary, path) == 0 else {
            throw BenchmarkError("fsync/close/rename \(temporary): \(errno)")
        }
        let directory = open((path as NSString).deletingLastPathComponent, O_RDONLY)
        guard directory >= 0 else { throw BenchmarkError("open directory: \(errno)") }
        defer { close(directory) }
        guard fsync(directory) == 0 else { throw BenchmarkError("fsync directory: \(errno)") }
        return Written(uncompressedBytes: buffer.count, compressedBytes: total)
    }
}
