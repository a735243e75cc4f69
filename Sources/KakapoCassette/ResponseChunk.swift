import KakapoHTTP

/// One piece of a streamed answer (server-sent events): its bytes and when it arrived, in milliseconds
/// after the first one. A cassette stores an event stream as a list of these, one event per entry, and
/// replays them with the same gaps.
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
}

extension [ResponseChunk] {
    /// The whole body: every chunk's bytes in order.
    public var joinedBytes: [UInt8] { flatMap(\.bytes) }
}
