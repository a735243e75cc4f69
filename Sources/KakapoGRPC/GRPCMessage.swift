import KakapoHTTP

/// One gRPC message as it travels: a length-prefixed frame's flag and payload (the 1-byte compressed
/// flag and the 4-byte big-endian length are the frame's; `bytes` is what the length counted).
public struct GRPCMessage: Hashable, Sendable {
    /// The frame's compressed flag: the payload is compressed with the call's `grpc-encoding`.
    public var compressed: Bool
    /// The message's bytes as sent (compressed when `compressed`).
    public var bytes: [UInt8]

    public init(compressed: Bool = false, bytes: [UInt8]) {
        self.compressed = compressed
        self.bytes = bytes
    }

    /// The largest payload one frame can announce: its length field holds 32 bits.
    public static let largestLength = Int(UInt32.max)

    /// The frame: flag, length, payload.
    public var framed: [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(5 + bytes.count)
        append(to: &frame)
        return frame
    }

    /// Appends the frame to `output`.
    public func append(to output: inout [UInt8]) {
        // A payload longer than a length field holds cannot come from a frame; clamped so writing never traps.
        let length = UInt32(clamping: bytes.count)
        output.append(compressed ? 1 : 0)
        output.append(UInt8(truncatingIfNeeded: length >> 24))
        output.append(UInt8(truncatingIfNeeded: length >> 16))
        output.append(UInt8(truncatingIfNeeded: length >> 8))
        output.append(UInt8(truncatingIfNeeded: length))
        output += bytes.prefix(Int(length))
    }
}

extension [GRPCMessage] {
    /// The messages framed one after the other: a gRPC body.
    public var framed: [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(reduce(0) { $0 + 5 + $1.bytes.count })
        for message in self { message.append(to: &body) }
        return body
    }
}
