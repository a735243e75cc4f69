import KakapoCassette
import KakapoWebSocket
import Testing

/// The recorder's own RFC 6455 frame reader and permessage-deflate inflater, fed bytes as a tap sees them.
@Suite("WebSocket frame reader")
struct WebSocketFrameReaderTests {
    /// One frame as a peer sends it; with `mask`, masked as a client must.
    static func frame(
        _ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv1: Bool = false, mask: [UInt8]? = nil
    ) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | opcode]
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        if payload.count < 126 {
            bytes.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            bytes += (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        guard let mask else { return bytes + payload }
        return bytes + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// Reads `bytes` in pieces of `piece` bytes; returns the events and the failure.
    static func read(
        _ bytes: [UInt8], piece: Int = .max, limit: Int = 1 << 20, compression: Bool = false
    ) -> ([WebSocketFrameReader.Event], WebSocketFrameReader.Failure?) {
        var reader = WebSocketFrameReader(maximumMessageBytes: limit, allowsCompression: compression)
        var events: [WebSocketFrameReader.Event] = []
        var start = 0
        while start < bytes.count {
            let end = start + min(piece, bytes.count - start)
            let failure = Array(bytes[start..<end]).withUnsafeBytes { reader.read($0) { events.append($0) } }
            if let failure { return (events, failure) }
            start = end
        }
        return (events, nil)
    }

    @Test("reads a server's text and binary messages, and the close with its code and reason")
    func unmasked() {
        let bytes =
            Self.frame(1, Array("hello".utf8)) + Self.frame(2, [0, 1, 2, 255])
            + Self.frame(8, [0x03, 0xE8] + Array("bye".utf8)) + Self.frame(1, Array("after".utf8))
        let (events, failure) = Self.read(bytes)
        #expect(failure == nil)
        #expect(
            events == [
                .message(isText: true, compressed: false, payload: Array("hello".utf8)),
                .message(isText: false, compressed: false, payload: [0, 1, 2, 255]),
                .close(code: 1000, reason: Array("bye".utf8)),
            ])
    }

    @Test("joins a client's masked fragments fed a byte at a time, skipping a ping between them")
    func fragmentsAndMasking() {
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        let long = [UInt8](repeating: 0x61, count: 300)
        let bytes =
            Self.frame(1, Array("Hel".utf8), fin: false, mask: mask)
            + Self.frame(9, Array("ping".utf8), mask: [9, 9, 9, 9])
            + Self.frame(0, Array("lo".utf8), fin: false, mask: [1, 2, 3, 4])
            + Self.frame(0xA, [], mask: mask)
            + Self.frame(0, long, mask: mask)
            + Self.frame(8, [], mask: mask)
        for piece in [1, 3, 7, .max] {
            let (events, failure) = Self.read(bytes, piece: piece)
            #expect(failure == nil)
            #expect(
                events == [
                    .message(isText: true, compressed: false, payload: Array("Hello".utf8) + long),
                    .close(code: nil, reason: []),
                ], "pieces of \(piece)")
        }
    }

    @Test("a large message with a 64-bit length is read whole")
    func longLength() {
        let payload = (0..<70_000).map { UInt8($0 & 0xFF) }
        let (events, failure) = Self.read(Self.frame(2, payload, mask: [5, 6, 7, 8]), piece: 4096)
        #expect(failure == nil)
        #expect(events == [.message(isText: false, compressed: false, payload: payload)])
    }

    @Test("hostile frames stop the reader with a reason, before any length is used")
    func hostile() {
        // A 64-bit length with its top bit set.
        let topBit: [UInt8] = [0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1]
        #expect(Self.read(topBit).1 == .malformed("a 64-bit length with its top bit set"))
        // The largest legal length, far past the limit: refused at its header.
        let huge: [UInt8] = [0x82, 127, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        #expect(Self.read(huge).1 == .tooLarge(limit: 1 << 20))
        // Fragments adding up past the limit.
        let fragments =
            Self.frame(2, [UInt8](repeating: 0, count: 600), fin: false)
            + Self.frame(0, [UInt8](repeating: 0, count: 600))
        #expect(Self.read(fragments, limit: 1000).1 == .tooLarge(limit: 1000))
        #expect(Self.read([0x83, 0]).1 == .malformed("reserved opcode 3"))
        #expect(Self.read(Self.frame(0, [1])).1 == .malformed("a continuation frame outside a message"))
        #expect(Self.read(Self.frame(9, [], fin: false)).1 == .malformed("a fragmented control frame"))
        #expect(Self.read([0x89, 126, 0, 200]).1 == .malformed("a control frame longer than 125 bytes"))
        #expect(
            Self.read(Self.frame(1, [1], rsv1: true)).1 == .malformed("RSV1 set without permessage-deflate negotiated"))
        #expect(Self.read(Self.frame(8, [3])).1 == .malformed("a close frame with a 1-byte body"))
        #expect(
            Self.read(Self.frame(1, [1], fin: false) + Self.frame(1, [2])).1
                == .malformed("a new message before the last one's final frame"))
    }

    @Test("RSV1 marks a compressed message when permessage-deflate was negotiated")
    func compressedFlag() {
        let bytes =
            Self.frame(1, [0xF2, 0x48], fin: false, rsv1: true) + Self.frame(0, [0xCD, 0xC9, 0xC9, 0x07, 0x00])
        let (events, failure) = Self.read(bytes, compression: true)
        #expect(failure == nil)
        #expect(
            events == [.message(isText: true, compressed: true, payload: [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])])
    }
}

/// permessage-deflate (RFC 7692) as the recorder inflates it.
@Suite("WebSocket inflater")
struct WebSocketInflaterTests {
    /// "Hello" compressed (RFC 7692 7.2.3.1), then "Hello" again referring back to the first (7.2.3.2).
    static let first: [UInt8] = [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]
    static let second: [UInt8] = [0xF2, 0x00, 0x11, 0x00, 0x00]

    /// `bytes` as raw deflate data: zlib's format without its 2-byte header and 4-byte checksum.
    static func deflated(_ bytes: [UInt8]) -> [UInt8] {
        let zlib = ContentCoding.deflate.encode(bytes)
        return Array(zlib[2..<(zlib.count - 4)])
    }

    @Test("keeps the stream between messages (context takeover)")
    func contextTakeover() {
        let inflater = WebSocketInflater(resetsEachMessage: false)
        #expect(inflater.inflate(Self.first, limit: 100) == .inflated(Array("Hello".utf8)))
        #expect(inflater.inflate(Self.second, limit: 100) == .inflated(Array("Hello".utf8)))
    }

    @Test("with no_context_takeover each message stands alone, so one referring back is invalid")
    func noContextTakeover() {
        let inflater = WebSocketInflater(resetsEachMessage: true)
        #expect(inflater.inflate(Self.first, limit: 100) == .inflated(Array("Hello".utf8)))
        #expect(inflater.inflate(Self.first, limit: 100) == .inflated(Array("Hello".utf8)))
        #expect(inflater.inflate(Self.second, limit: 100) == .invalid)
    }

    @Test("a message ending in a final block, a decompression bomb and garbage")
    func finalBombAndGarbage() {
        let inflater = WebSocketInflater(resetsEachMessage: false)
        let text = Array(String(repeating: "kakapo ", count: 1000).utf8)
        #expect(inflater.inflate(Self.deflated(text), limit: 1 << 20) == .inflated(text))
        #expect(inflater.inflate(Self.first, limit: 100) == .inflated(Array("Hello".utf8)))
        let bomb = Self.deflated([UInt8](repeating: 0, count: 8 << 20))
        #expect(bomb.count < 64 * 1024)
        #expect(WebSocketInflater(resetsEachMessage: false).inflate(bomb, limit: 1 << 20) == .tooLarge)
        #expect(WebSocketInflater(resetsEachMessage: false).inflate([0xFF, 0xFF, 0xFF, 0xFF], limit: 100) == .invalid)
    }
}

/// The upstream's answer to the upgrade as the recorder reads it.
@Suite("WebSocket recording head")
struct WebSocketRecordingHeadTests {
    @Test("reads a 101's subprotocol and permessage-deflate parameters, and where the frames start")
    func switching() throws {
        let text =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Protocol: chat.v2\r\n"
            + "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_max_window_bits=15\r\n\r\n"
        let bytes = Array(text.utf8) + [0x81, 0]
        guard case .head(let head, let start) = WebSocketRecordingHead.parse(bytes) else {
            Issue.record("not read")
            return
        }
        #expect(head.status == 101)
        #expect(start == text.utf8.count)
        #expect(head.subprotocol == "chat.v2")
        let deflate = try #require(head.deflate)
        #expect(deflate.serverResets && !deflate.clientResets)
        #expect(WebSocketRecordingHead.parse(Array("HTTP/1.1 101 OK\r\n".utf8)) == .incomplete)
        // A byte at a time, each search starting where the last one stopped.
        var pending: [UInt8] = []
        var result = WebSocketRecordingHead.Parse.incomplete
        for byte in Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n".utf8) {
            let searched = pending.count - 3
            pending.append(byte)
            result = WebSocketRecordingHead.parse(pending, searchingFrom: searched)
            if result != .incomplete { break }
        }
        guard case .head(let dripped, let end) = result else {
            Issue.record("not read a byte at a time: \(result)")
            return
        }
        #expect(dripped.status == 101 && end == pending.count && dripped.headers["Upgrade"] == "websocket")
        #expect(WebSocketRecordingHead.parse(Array("SSH-2.0\r\n\r\n".utf8)) == .malformed)
        guard
            case .head(let refusal, _) = WebSocketRecordingHead.parse(
                Array("HTTP/1.1 403 Forbidden\r\nContent-Length: 12\r\n\r\n".utf8))
        else {
            Issue.record("not read")
            return
        }
        #expect(refusal.contentLength == 12 && refusal.deflate == nil && refusal.subprotocol == nil)
    }
}
