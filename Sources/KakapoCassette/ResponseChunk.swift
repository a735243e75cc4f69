import KakapoHTTP

/// One piece of a streamed answer: its bytes and when it arrived, in milliseconds after the first one. A
/// cassette stores a streamed answer as a list of these (one server-sent event or one line of
/// newline-delimited JSON per entry, or the pieces of another chunked answer as they came) and replays
/// them with the same gaps.
public struct ResponseChunk: Hashable, Sendable {
    public var offsetMilliseconds: Double
    public var bytes: [UInt8]

    public init(offsetMilliseconds: Double, bytes: [UInt8]) {
        self.offsetMilliseconds = offsetMilliseconds
        self.bytes = bytes
    }

    /// Takes the complete server-sent events (each ending with its blank line) off the front of
    /// `pending`, leaving a partial event there.
    public static func takeEvents(from pending: inout [UInt8]) -> [[UInt8]] {
        var events: [[UInt8]] = []
        var start = 0
        var index = 0
        while index + 1 < pending.count {
            // An event ends with an empty line: "\n\n" or "\n\r\n".
            var end: Int?
            if pending[index] == 0x0A && pending[index + 1] == 0x0A {
                end = index + 1
            } else if pending[index] == 0x0A && pending[index + 1] == 0x0D && index + 2 < pending.count
                && pending[index + 2] == 0x0A
            {
                end = index + 2
            }
            if let end {
                events.append(Array(pending[start...end]))
                start = end + 1
                index = start
            } else {
                index += 1
            }
        }
        if start > 0 { pending.removeFirst(start) }
        return events
    }

    /// Takes the complete lines (each with its `\n`) off the front of `pending`, leaving a partial line
    /// there: newline-delimited JSON, one record per chunk.
    public static func takeLines(from pending: inout [UInt8]) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var start = 0
        while let end = pending[start...].firstIndex(of: 0x0A) {
            lines.append(Array(pending[start...end]))
            start = end + 1
        }
        if start > 0 { pending.removeFirst(start) }
        return lines
    }
}

extension [ResponseChunk] {
    /// The whole body: every chunk's bytes in order.
    public var joinedBytes: [UInt8] { flatMap(\.bytes) }
}
