/// Follows the length-prefixed messages of a gRPC request body as its pieces arrive, keeping no bytes: how
/// many messages are complete and whether the body so far ends where a message ends. Each byte is looked at
/// once; a length is read from its 5-byte prefix as it comes.
struct GRPCFrameBoundary {
    /// Messages whose every byte has arrived.
    private(set) var messages = 0
    /// Bytes of the current message's prefix read so far (0 to 5): 0 between messages.
    private var prefixBytes = 0
    /// The current message's length, as far as its prefix has been read.
    private var length = 0
    /// Bytes of the current message's content still to come.
    private var remaining = 0

    /// Whether the body so far ends exactly where a message ends (or is empty).
    var atBoundary: Bool { prefixBytes == 0 && remaining == 0 }

    /// Reads the next piece of the body.
    mutating func read(_ bytes: some Collection<UInt8>) {
        var index = bytes.startIndex
        while index != bytes.endIndex {
            if remaining > 0 {
                // Skipped without a look: content needs no reading.
                let available = bytes.distance(from: index, to: bytes.endIndex)
                let taken = min(available, remaining)
                remaining -= taken
                index = bytes.index(index, offsetBy: taken)
                if remaining == 0 { messages += 1 }
                continue
            }
            let byte = bytes[index]
            index = bytes.index(after: index)
            if prefixBytes > 0 {
                // Bytes 1 to 4 of the prefix: the big-endian length (at most 2^32 - 1, no overflow).
                length = length << 8 | Int(byte)
            }
            prefixBytes += 1
            if prefixBytes == 5 {
                prefixBytes = 0
                remaining = length
                length = 0
                if remaining == 0 { messages += 1 }
            }
        }
    }
}
