import CZlib

/// Decompresses the messages one side of a WebSocket sends with permessage-deflate (RFC 7692): each is raw
/// deflate data without its final `00 00 FF FF`, which is appended before inflating. The zlib stream is
/// kept from one message to the next (context takeover: a message may refer back to earlier ones) unless
/// the side negotiated `*_no_context_takeover`, when it is reset after each. Output past `limit` bytes
/// stops inflating (a decompression bomb) instead of being kept.
package final class WebSocketInflater {
    /// The result of inflating one message.
    package enum Result: Equatable {
        case inflated([UInt8])
        case tooLarge
        case invalid
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private let resetsEachMessage: Bool
    private var ready: Bool
    private static let tail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    /// An inflater for one side's messages; `resetsEachMessage` when that side negotiated
    /// `*_no_context_takeover` (each message then stands alone). A zlib stream that fails to start makes
    /// every message `.invalid`.
    package init(resetsEachMessage: Bool) {
        self.resetsEachMessage = resetsEachMessage
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // Raw deflate with the largest window: it reads data made with any smaller one (max_window_bits).
        ready = kakapo_inflate_init(stream, -15) == Z_OK
    }

    deinit {
        if ready { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// `payload` (one whole message as sent) inflated, up to `limit` bytes. After `.invalid` or
    /// `.tooLarge` the stream's context is lost: the caller stops using this inflater.
    package func inflate(_ payload: [UInt8], limit: Int) -> Result {
        guard ready else { return .invalid }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var ended = false
        for piece in [payload, Self.tail] where !ended {
            var input = piece
            let outcome: Result? = input.withUnsafeMutableBufferPointer { source -> Result? in
                stream.pointee.next_in = source.baseAddress
                stream.pointee.avail_in = uInt(source.count)
                while true {
                    let status = chunk.withUnsafeMutableBufferPointer { target -> Int32 in
                        stream.pointee.next_out = target.baseAddress
                        stream.pointee.avail_out = uInt(target.count)
                        return CZlib.inflate(stream, Z_SYNC_FLUSH)
                    }
                    let produced = chunk.count - Int(stream.pointee.avail_out)
                    guard produced <= limit - output.count else { return .tooLarge }
                    output.append(contentsOf: chunk[0..<produced])
                    switch status {
                    case Z_OK where stream.pointee.avail_out == 0 || stream.pointee.avail_in > 0:
                        continue
                    case Z_OK, Z_BUF_ERROR:
                        // All input read and the output not full: this piece is done.
                        return nil
                    case Z_STREAM_END:
                        // A final block (BFINAL): the message is whole without the appended tail, and the
                        // sender starts a new stream with its next message.
                        ended = true
                        return nil
                    default:
                        return .invalid
                    }
                }
            }
            stream.pointee.next_in = nil
            if let outcome {
                ready = inflateReset(stream) == Z_OK
                return outcome
            }
        }
        if resetsEachMessage || ended { ready = inflateReset(stream) == Z_OK }
        return .inflated(output)
    }
}
