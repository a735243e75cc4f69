extension Redactor {
    /// The secrets an interaction may echo, indexed by their first byte, so that one pass over a text finds every
    /// one of them: the cost is the text's length (times the few secrets that share a first byte), not the
    /// number of secrets times the length, which matters for a conversation of 100,000 messages.
    struct EchoSearch {
        /// The secrets, longest first, so that a secret holding a shorter one is replaced whole.
        let secrets: [[UInt8]]
        /// For each byte value, the indices of the secrets that start with it, longest first.
        private let byFirstByte: [[Int]]
        private static let placeholder = Array(Redactor.placeholder.utf8)

        init(_ secrets: [[UInt8]]) {
            let kept = secrets.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
            var table = [[Int]](repeating: [], count: 256)
            for (index, secret) in kept.enumerated() { table[Int(secret[0])].append(index) }
            self.secrets = kept
            self.byFirstByte = table
        }

        var isEmpty: Bool { secrets.isEmpty }

        /// `bytes` with every occurrence of a secret replaced by the placeholder (leftmost first, the longest
        /// secret where several start at the same byte); `count` grows by the number replaced. With `sameLength`
        /// (binary bytes, whose framing counts lengths) each is masked at its own length (`Redactor.mask`).
        func replace(in bytes: [UInt8], count: inout Int, sameLength: Bool = false) -> [UInt8] {
            guard !secrets.isEmpty else { return bytes }
            var output: [UInt8]?
            bytes.withUnsafeBufferPointer { buffer in
                var copied = 0
                var index = 0
                while index < buffer.count {
                    var length = 0
                    for candidate in byFirstByte[Int(buffer[index])] {
                        let secret = secrets[candidate]
                        guard index + secret.count <= buffer.count else { continue }
                        var offset = 1
                        while offset < secret.count && buffer[index + offset] == secret[offset] { offset += 1 }
                        if offset == secret.count {
                            length = secret.count
                            break
                        }
                    }
                    guard length > 0 else {
                        index += 1
                        continue
                    }
                    if output == nil {
                        output = []
                        output?.reserveCapacity(buffer.count)
                    }
                    output?.append(contentsOf: buffer[copied..<index])
                    output?.append(contentsOf: sameLength ? Redactor.mask(count: length) : Self.placeholder)
                    count += 1
                    index += length
                    copied = index
                }
                if output != nil { output?.append(contentsOf: buffer[copied...]) }
            }
            return output ?? bytes
        }
    }
}
