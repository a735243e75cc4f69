extension Redactor {
    /// The secrets an interaction may echo, indexed by their first byte, so that one pass over a text finds every
    /// one of them: the cost is the text's length (times the few secrets that share a first byte), not the
    /// number of secrets times the length, which matters for a conversation of 100,000 messages.
    struct EchoSearch {
        /// The secrets, longest first, so that a secret holding a shorter one is replaced whole.
        let secrets: [[UInt8]]
        /// For each byte value, the indices of the secrets that start with it, longest first.
        private let byFirstByte: [[Int]]
        /// For each secret, where the request carried it and the placeholder that names it
        /// (`Redactor.echoPlaceholder`), or nil for the plain placeholder; empty when this search has none.
        private let labels: [(source: String, placeholder: [UInt8])?]
        private static let placeholder = Array(Redactor.placeholder.utf8)

        /// `labels` names, by secret, where the request carried it; secrets it does not name get the
        /// plain placeholder.
        init(_ secrets: [[UInt8]], labels: [[UInt8]: String] = [:]) {
            let kept = secrets.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
            // No table without secrets: every search returns before it would look (most interactions).
            var table = [[Int]](repeating: [], count: kept.isEmpty ? 0 : 256)
            for (index, secret) in kept.enumerated() { table[Int(secret[0])].append(index) }
            self.secrets = kept
            self.byFirstByte = table
            self.labels =
                labels.isEmpty
                ? []
                : kept.map { secret in
                    labels[secret].map { (source: $0, placeholder: Array(Redactor.echoPlaceholder($0).utf8)) }
                }
        }

        var isEmpty: Bool { secrets.isEmpty }

        /// The same secrets, each replaced by the placeholder naming where the request carried it.
        func labelled(_ labels: [[UInt8]: String]) -> EchoSearch { EchoSearch(secrets, labels: labels) }

        /// The sources of the labelled secrets at `indices` (as `replace(in:count:used:)` gathers them), in order.
        func sources(of indices: Set<Int>) -> [String] {
            guard !labels.isEmpty else { return [] }
            return Array(Set(indices.compactMap { labels[$0]?.source })).sorted()
        }

        /// The labelled placeholder of the secret that is the whole of `bytes`, and its index; nil when
        /// `bytes` is no secret, or one without a label.
        func wholeLabel(of bytes: [UInt8]) -> (index: Int, placeholder: [UInt8])? {
            guard !labels.isEmpty, let first = bytes.first else { return nil }
            for candidate in byFirstByte[Int(first)] where secrets[candidate] == bytes {
                return labels[candidate].map { (candidate, $0.placeholder) }
            }
            return nil
        }

        /// Whether a secret occurs anywhere in `bytes`.
        func occurs(in bytes: [UInt8]) -> Bool {
            guard !secrets.isEmpty else { return false }
            return bytes.withUnsafeBufferPointer { buffer in
                (0..<buffer.count).contains { match(at: $0, in: buffer) != nil }
            }
        }

        /// `bytes` with every occurrence of a secret replaced by the placeholder (leftmost first, the longest
        /// secret where several start at the same byte); `count` grows by the number replaced. With `sameLength`
        /// (binary bytes, whose framing counts lengths) each is masked at its own length (`Redactor.mask`).
        func replace(in bytes: [UInt8], count: inout Int, sameLength: Bool = false) -> [UInt8] {
            var ignored: Set<Int> = []
            return replace(in: bytes, count: &count, sameLength: sameLength, used: &ignored)
        }

        /// The same, with the labelled placeholder where this search has labels (so replay can give the live
        /// request's value back, `EchoReplay`), not for `sameLength` masks; `used` gathers the indices of the
        /// labelled secrets replaced.
        func replace(in bytes: [UInt8], count: inout Int, sameLength: Bool = false, used: inout Set<Int>) -> [UInt8] {
            guard !secrets.isEmpty else { return bytes }
            var output: [UInt8]?
            bytes.withUnsafeBufferPointer { buffer in
                var copied = 0
                var index = 0
                while index < buffer.count {
                    guard let found = match(at: index, in: buffer) else {
                        index += 1
                        continue
                    }
                    if output == nil {
                        output = []
                        output?.reserveCapacity(buffer.count)
                    }
                    output?.append(contentsOf: buffer[copied..<index])
                    let length = secrets[found].count
                    if sameLength {
                        output?.append(contentsOf: Redactor.mask(count: length))
                    } else if !labels.isEmpty, let label = labels[found] {
                        output?.append(contentsOf: label.placeholder)
                        used.insert(found)
                    } else {
                        output?.append(contentsOf: Self.placeholder)
                    }
                    count += 1
                    index += length
                    copied = index
                }
                if output != nil { output?.append(contentsOf: buffer[copied...]) }
            }
            return output ?? bytes
        }

        /// The index of the longest secret that starts at `index` of `buffer`, if any.
        private func match(at index: Int, in buffer: UnsafeBufferPointer<UInt8>) -> Int? {
            for candidate in byFirstByte[Int(buffer[index])] {
                let secret = secrets[candidate]
                guard index + secret.count <= buffer.count else { continue }
                var offset = 1
                while offset < secret.count && buffer[index + offset] == secret[offset] { offset += 1 }
                if offset == secret.count { return candidate }
            }
            return nil
        }
    }
}
