extension FullText {
    /// Calls `body` with the UTF-8 bytes of each token of `text`, in order: exactly the tokens of
    /// ``tokens(of:)``, folded, without making a `String` of an ASCII text's tokens. `scratch` holds
    /// the folded text between calls (so a bulk build allocates it once); the bytes given to
    /// `body` are valid only during the call.
    static func forEachToken(of text: String, scratch: inout [UInt8], _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var text = text
        guard text.withUTF8({ foldASCII($0, into: &scratch) }) else {
            for token in scalarTokens(of: text) {
                var token = token
                token.withUTF8(body)
            }
            return
        }
        // In folded ASCII the token characters are the digits and the lowercase letters.
        scratch.withUnsafeBufferPointer { folded in
            var start = 0
            for index in folded.indices {
                let byte = folded[index]
                if !(byte >= 0x30 && byte <= 0x39) && !(byte >= 0x61 && byte <= 0x7A) {
                    if index > start { body(UnsafeBufferPointer(rebasing: folded[start..<index])) }
                    start = index + 1
                }
            }
            if folded.count > start { body(UnsafeBufferPointer(rebasing: folded[start...])) }
        }
    }

    /// Writes `bytes` lowercased into `scratch` (replacing what it held); false when they hold a
    /// byte outside ASCII, with `scratch` then undefined.
    private static func foldASCII(_ bytes: UnsafeBufferPointer<UInt8>, into scratch: inout [UInt8]) -> Bool {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: bytes)
        return scratch.withUnsafeMutableBufferPointer { folded in
            for index in folded.indices {
                let byte = folded[index]
                guard byte < 0x80 else { return false }
                if byte >= 0x41 && byte <= 0x5A { folded[index] = byte | 0x20 }
            }
            return true
        }
    }
}
