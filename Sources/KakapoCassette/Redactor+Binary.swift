/// Binary bodies and WebSocket binary messages (issue 42): credential-shaped values (JWTs, `Bearer ...`, AWS
/// key ids, SigV4 values, the known token prefixes) found in runs of printable bytes are masked in place with a
/// placeholder of the same length (`[REDACTED*****]`), as are secrets the request carried, so that
/// length-prefixed framing (MQTT, protobuf) stays valid and a replayed message still parses.
extension Redactor {
    /// The shortest run of printable bytes searched: no credential shape is shorter.
    static let shortestBinaryRun = 8
    /// The largest binary body searched; past it the body is not inspected.
    static let maximumBinaryBytes = 64 << 20

    /// A placeholder of exactly `count` bytes: `[REDACTED]` padded with `*` inside its brackets, or `*`s when
    /// it is shorter than that.
    static func mask(count: Int) -> [UInt8] {
        let plain = Array(placeholder.utf8)
        guard count >= plain.count else { return Array(repeating: UInt8(ascii: "*"), count: max(0, count)) }
        return plain.dropLast() + Array(repeating: UInt8(ascii: "*"), count: count - plain.count) + [UInt8(ascii: "]")]
    }

    /// Whether `bytes` at `index` hold a mask `mask(count:)` wrote (so a second pass leaves it alone).
    static func isMask(_ bytes: ArraySlice<UInt8>) -> Bool {
        let plain = Array(placeholder.utf8)
        guard bytes.count >= plain.count else { return !bytes.isEmpty && bytes.allSatisfy { $0 == UInt8(ascii: "*") } }
        return bytes.starts(with: plain.dropLast()) && bytes.last == UInt8(ascii: "]")
            && bytes.dropFirst(plain.count - 1).dropLast().allSatisfy { $0 == UInt8(ascii: "*") }
    }

    /// `bytes` with every credential-shaped value in a printable run masked at the same length, or nil when
    /// there is none.
    func maskBinary(_ bytes: [UInt8], noting kinds: inout [String]) -> [UInt8]? {
        guard byShape else { return nil }
        var output: [UInt8]?
        Self.forEachSpan(in: bytes) { start, _, span in
            if output == nil { output = bytes }
            output?.replaceSubrange(
                (start + span.range.lowerBound)..<(start + span.range.upperBound),
                with: Self.mask(count: span.range.count))
            kinds.append(span.kind)
        }
        return output
    }

    /// The secret values in a binary message's printable runs, for finding them echoed elsewhere.
    static func binarySecrets(in bytes: [UInt8]) -> [String] {
        var found: [String] = []
        forEachSpan(in: bytes) { _, run, span in found.append(String(decoding: run[span.range], as: UTF8.self)) }
        return found
    }

    /// Calls `body` with each credential-shaped span of each printable run of `bytes` (at least
    /// `shortestBinaryRun` long): where the run starts, the run, and the span within it. Nothing past
    /// `maximumBinaryBytes` is searched.
    private static func forEachSpan(
        in bytes: [UInt8], _ body: (_ start: Int, _ run: [UInt8], _ span: CredentialValues.Span) -> Void
    ) {
        guard bytes.count <= maximumBinaryBytes else { return }
        var index = 0
        while index < bytes.count {
            guard isPrintable(bytes[index]) else {
                index += 1
                continue
            }
            let start = index
            while index < bytes.count && isPrintable(bytes[index]) { index += 1 }
            guard index - start >= shortestBinaryRun else { continue }
            let run = Array(bytes[start..<index])
            guard CredentialValues.mightHoldCredential(run) else { continue }
            for span in binarySpans(in: run) { body(start, run, span) }
        }
    }

    /// Spans of a printable run cut out of binary bytes. The byte before a value is often a length or a tag
    /// that happens to be printable (a protobuf string of 101 bytes is preceded by `e`), which would hide the
    /// start of a JWT or a token: the run is searched from its first three bytes, and the spans are merged.
    private static func binarySpans(in run: [UInt8]) -> [CredentialValues.Span] {
        var spans: [CredentialValues.Span] = []
        for skip in 0..<min(3, run.count) {
            for span in CredentialValues.spans(in: Array(run[skip...])) {
                let range = (span.range.lowerBound + skip)..<(span.range.upperBound + skip)
                guard !isMask(run[range]) else { continue }
                spans.append(CredentialValues.Span(range: range, kind: span.kind))
            }
        }
        spans.sort {
            $0.range.lowerBound < $1.range.lowerBound
                || ($0.range.lowerBound == $1.range.lowerBound && $0.range.count > $1.range.count)
        }
        var merged: [CredentialValues.Span] = []
        for span in spans {
            if let last = merged.last, span.range.lowerBound < last.range.upperBound {
                if span.range.upperBound > last.range.upperBound {
                    merged[merged.count - 1] = CredentialValues.Span(
                        range: last.range.lowerBound..<span.range.upperBound, kind: last.kind)
                }
                continue
            }
            merged.append(span)
        }
        return merged
    }

    /// A live binary message or body as recording masked it, with the live request's secrets (`echoing`)
    /// masked too, for comparing with a recorded one.
    func binaryForMatching(_ bytes: [UInt8], echoing secrets: [[UInt8]] = []) -> [UInt8] {
        var kinds: [String] = []
        var count = 0
        let masked = maskBinary(bytes, noting: &kinds) ?? bytes
        return secrets.isEmpty ? masked : EchoSearch(secrets).replace(in: masked, count: &count, sameLength: true)
    }

    private static func isPrintable(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x7F }
}
