import Foundation

extension SnapshotHeader.Chunk {
    /// Checks this chunk's bytes in `file` against its ``checksum`` and decompresses them into
    /// `parts`, which together hold exactly its `uncompressedSize` bytes
    /// (``LZ4Frame/Decompressor/decompress(_:into:)``) with `decompressor`.
    /// - Throws: ``SnapshotRejection/checksumMismatch`` when a byte of the chunk differs from what
    ///   was written; whatever ``LZ4Frame/Decompressor/decompress(_:into:)`` throws.
    func inflate(from file: UnsafeRawBufferPointer, with decompressor: LZ4Frame.Decompressor,
                 into parts: [UnsafeMutableRawBufferPointer]) throws(StrataError) {
        let frame = UnsafeRawBufferPointer(rebasing: file[offset..<(offset + compressedSize)])
        try Self.check(frame, at: offset, against: checksum, "the chunk's frame")
        try decompressor.decompress(frame, into: parts)
    }

    /// Checks `frame`, at byte `start` of the file, against the XXH64 `recorded` for it.
    /// - Throws: ``SnapshotRejection/checksumMismatch`` naming the frame and both checksums.
    private static func check(_ frame: UnsafeRawBufferPointer, at start: Int, against recorded: UInt64,
                              _ what: String) throws(StrataError) {
        let computed = XXH64.hash(frame)
        guard computed == recorded else {
            throw .snapshot(.checksumMismatch, "\(what) (\(frame.count) bytes at byte \(start)) has XXH64 "
                            + "\(computed.hexadecimal); the header records \(recorded.hexadecimal)")
        }
    }

    /// Where this chunk is, for a message: "Article's chunk 3 (bytes 1200..<5400)", `number`
    /// being its place in `entity`'s section.
    func place(_ number: Int, of entity: String) -> String {
        "\(entity)'s chunk \(number) (bytes \(offset)..<\(end))"
    }

    /// Checks that this chunk has a deferred frame exactly when `schema` defers attributes (and,
    /// without one, no deferred bytes): the one rule a load, a first chunk and a verify check.
    /// - Throws: ``SnapshotRejection/undecodable`` naming the entity.
    func checkDeferredFrame(of schema: EntitySchema) throws(StrataError) {
        let defers = !schema.deferredAttributes.isEmpty
        guard defers ? deferredCompressedSize > 0 : deferredCompressedSize == 0 && deferredSize == 0 else {
            throw .snapshot(.undecodable, "\(schema.name): a chunk \(defers ? "lacks" : "has") a frame of deferred bytes, "
                            + "which the entity \(defers ? "defers" : "does not defer")", entity: schema.name)
        }
    }

    /// This chunk's deferred frame in `file`, checked against its ``deferredChecksum`` and copied
    /// into `frames` from `start` (memory of the process's own), as an ``ArenaPage`` of its
    /// ``deferredSize`` bytes that decompresses the copy on the first read of any of them. A
    /// frame that does not decompress to exactly its size leaves the page zeroed and calls `failed`.
    /// - Throws: ``SnapshotRejection/checksumMismatch`` when a byte of the frame differs from what
    ///   was written.
    func deferredPage(from file: UnsafeRawBufferPointer, copyingInto frames: CompressedFrames, at start: Int,
                      failed: @escaping @Sendable () -> Void) throws(StrataError) -> ArenaPage {
        let frame = UnsafeRawBufferPointer(rebasing: file[deferredOffset..<end])
        try Self.check(frame, at: deferredOffset, against: deferredChecksum, "the chunk's deferred frame")
        let copied = frames.copy(frame, to: start)
        return ArenaPage(deferred: deferredSize, filledBy: DeferredBytes { page in
            do throws(StrataError) {
                try frames.decompress(copied, into: page)
                return true
            } catch {
                failed()
                return false
            }
        })
    }

    /// ``deferredPage(from:copyingInto:at:failed:)`` into memory of its own.
    func deferredPage(from file: UnsafeRawBufferPointer,
                      failed: @escaping @Sendable () -> Void) throws(StrataError) -> ArenaPage {
        try deferredPage(from: file, copyingInto: CompressedFrames(byteCount: deferredCompressedSize), at: 0, failed: failed)
    }

    /// Decompresses this chunk of `file` into a temporary buffer and hands its contents to `body`.
    func inflate<T>(from file: UnsafeRawBufferPointer,
                    _ body: (UnsafeRawBufferPointer) throws(StrataError) -> T) throws(StrataError) -> T {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: uncompressedSize, alignment: 8)
        defer { buffer.deallocate() }
        try inflate(from: file, with: LZ4Frame.Decompressor(), into: [buffer])
        return try body(UnsafeRawBufferPointer(buffer))
    }
}
