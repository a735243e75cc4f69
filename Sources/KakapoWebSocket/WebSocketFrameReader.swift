/// An incremental reader of the frames one side of a WebSocket connection sends (RFC 6455 5.2), fed the
/// raw bytes as they pass a tap in whatever pieces TCP delivers: masked frames (a client's) are unmasked,
/// fragments are joined into whole messages, pings and pongs are skipped, and the first close ends the
/// reading. NIO's `WebSocketFrameDecoder` needs a channel pipeline of its own and consumes what it decodes;
/// a passive tap that must pass every byte on untouched has neither, which is why this reader is ours.
///
/// Every length is range-checked before it is used: a 64-bit length with its top bit set is malformed, and
/// a frame that would take a message past `maximumMessageBytes` is refused before a byte of it is kept.
/// Memory held is the current message (at most the limit) and at most 125 bytes of a control frame.
package struct WebSocketFrameReader {
    /// What the reader found: a whole message (compressed when its first frame had RSV1 set), or the close.
    package enum Event: Equatable {
        case message(isText: Bool, compressed: Bool, payload: [UInt8])
        case close(code: Int?, reason: [UInt8])
    }

    /// Why the reader stopped before the close: the bytes are not RFC 6455 frames, or a message is
    /// larger than the limit.
    package enum Failure: Error, Equatable {
        case malformed(String)
        case tooLarge(limit: Int)
    }

    /// The most one message's payload may take, summed over its fragments (before inflating).
    package let maximumMessageBytes: Int
    /// Whether RSV1 may mark a compressed message (permessage-deflate was negotiated).
    package var allowsCompression: Bool
    /// Set once the close was read, or the reader failed: nothing more is read.
    package private(set) var isFinished = false

    /// The frame header read so far (at most 14 bytes).
    private var header: [UInt8] = []
    /// Payload bytes of the current frame not yet read; nil while reading a header.
    private var remaining: Int?
    private var mask: (UInt8, UInt8, UInt8, UInt8)?
    private var maskIndex = 0
    private var opcode: UInt8 = 0
    private var final = false
    /// The message being joined: set from its first frame until its last.
    private var messageOpen = false
    private var messageIsText = false
    private var messageCompressed = false
    private var message: [UInt8] = []
    private var control: [UInt8] = []

    /// A reader at the start of a side's frames, refusing a message past `maximumMessageBytes` (a negative
    /// limit counts as 0); `allowsCompression` when permessage-deflate was negotiated.
    package init(maximumMessageBytes: Int, allowsCompression: Bool = false) {
        self.maximumMessageBytes = max(0, maximumMessageBytes)
        self.allowsCompression = allowsCompression
        header.reserveCapacity(14)
    }

    /// Reads `bytes`, calling `handle` for each message and the close they complete. Returns the failure
    /// that stopped it (then and after, nothing more is read); bytes after the close are ignored.
    package mutating func read(_ bytes: UnsafeRawBufferPointer, _ handle: (Event) -> Void) -> Failure? {
        var index = 0
        while index < bytes.count && !isFinished {
            guard let left = remaining else {
                header.append(bytes[index])
                index += 1
                switch parseHeader() {
                case .failure(let failure):
                    isFinished = true
                    return failure
                case .success(true):
                    if remaining == 0, let failure = endFrame(handle) {
                        isFinished = true
                        return failure
                    }
                case .success(false):
                    break
                }
                continue
            }
            let count = min(left, bytes.count - index)
            take(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]))
            index += count
            remaining = left - count
            if remaining == 0, let failure = endFrame(handle) {
                isFinished = true
                return failure
            }
        }
        return nil
    }

    /// Reads a complete header in `header`: `.success(true)` when it is whole (`remaining` then set),
    /// `.success(false)` when more bytes are needed.
    private mutating func parseHeader() -> Result<Bool, Failure> {
        guard header.count >= 2 else { return .success(false) }
        let first = header[0]
        let second = header[1]
        let lengthCode = second & 0x7F
        let extra = lengthCode == 126 ? 2 : lengthCode == 127 ? 8 : 0
        let masked = second & 0x80 != 0
        let size = 2 + extra + (masked ? 4 : 0)
        guard header.count >= size else { return .success(false) }
        let code = first & 0x0F
        let fin = first & 0x80 != 0
        let rsv1 = first & 0x40 != 0
        if first & 0x30 != 0 { return .failure(.malformed("RSV2 or RSV3 set (an extension Kakapo does not read)")) }
        var length: UInt64 = UInt64(lengthCode)
        if extra > 0 {
            length = 0
            for byte in header[2..<(2 + extra)] { length = length << 8 | UInt64(byte) }
            if extra == 8 && length >> 63 != 0 { return .failure(.malformed("a 64-bit length with its top bit set")) }
        }
        switch code {
        case 0x8, 0x9, 0xA:
            guard fin else { return .failure(.malformed("a fragmented control frame")) }
            guard length <= 125 else { return .failure(.malformed("a control frame longer than 125 bytes")) }
            guard !rsv1 else { return .failure(.malformed("RSV1 on a control frame")) }
        case 0x0:
            guard messageOpen else { return .failure(.malformed("a continuation frame outside a message")) }
            guard !rsv1 else { return .failure(.malformed("RSV1 on a continuation frame")) }
        case 0x1, 0x2:
            guard !messageOpen else { return .failure(.malformed("a new message before the last one's final frame")) }
            guard !rsv1 || allowsCompression else {
                return .failure(.malformed("RSV1 set without permessage-deflate negotiated"))
            }
        default:
            return .failure(.malformed("reserved opcode \(code)"))
        }
        let isControl = code & 0x8 != 0
        if !isControl {
            // The limit is checked on the 64-bit value, before it becomes an Int.
            let room = UInt64(maximumMessageBytes - (code == 0 ? message.count : 0))
            guard length <= room else { return .failure(.tooLarge(limit: maximumMessageBytes)) }
            if code != 0 {
                messageOpen = true
                messageIsText = code == 0x1
                messageCompressed = rsv1
                message = []
            }
        } else {
            control.removeAll(keepingCapacity: true)
        }
        opcode = code
        final = fin
        mask = masked ? (header[size - 4], header[size - 3], header[size - 2], header[size - 1]) : nil
        maskIndex = 0
        remaining = Int(length)
        header.removeAll(keepingCapacity: true)
        return .success(true)
    }

    /// Keeps a piece of the current frame's payload, unmasked.
    private mutating func take(_ piece: UnsafeRawBufferPointer) {
        if opcode & 0x8 != 0 {
            Self.append(piece, to: &control, mask: mask, position: &maskIndex)
        } else {
            Self.append(piece, to: &message, mask: mask, position: &maskIndex)
        }
    }

    private static func append(
        _ piece: UnsafeRawBufferPointer, to target: inout [UInt8], mask: (UInt8, UInt8, UInt8, UInt8)?,
        position: inout Int
    ) {
        let start = target.count
        target.append(contentsOf: piece)
        guard let mask else { return }
        let key = [mask.0, mask.1, mask.2, mask.3]
        var at = position
        target.withUnsafeMutableBufferPointer { bytes in
            for index in start..<bytes.count {
                bytes[index] ^= key[at & 3]
                at &+= 1
            }
        }
        position = at & 3
    }

    /// The current frame is whole: a message's last frame hands the message over, a close ends reading.
    private mutating func endFrame(_ handle: (Event) -> Void) -> Failure? {
        remaining = nil
        switch opcode {
        case 0x8:
            isFinished = true
            if control.isEmpty {
                handle(.close(code: nil, reason: []))
            } else if control.count == 1 {
                return .malformed("a close frame with a 1-byte body")
            } else {
                handle(.close(code: Int(control[0]) << 8 | Int(control[1]), reason: Array(control[2...])))
            }
        case 0x9, 0xA:
            break
        default:
            guard final else { return nil }
            messageOpen = false
            let payload = message
            message = []
            handle(.message(isText: messageIsText, compressed: messageCompressed, payload: payload))
        }
        return nil
    }
}
