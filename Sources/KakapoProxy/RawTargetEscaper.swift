import NIOCore

/// Escapes raw non-ASCII bytes in request targets (`GET /café?q=é`) as `%XX` with upper-case hex (RFC 3986
/// 2.1) before NIO's HTTP parser sees them: that parser is built strict and answers any byte past 0x7F in a
/// URL with "invalid URL", while curl sends a query's UTF-8 raw and escapes only the path. Matching treats
/// the raw bytes and their escapes as one (`String.percentEncodingNormalized()`), and libcurl needs them
/// escaped upstream, so nothing is lost by escaping them here.
///
/// Only request lines change. The handler follows the framing of each request just far enough to find the
/// next request line: headers to the blank line, then `Content-Length` bytes of body. When framing is
/// anything else (`Transfer-Encoding`, `Upgrade`, `CONNECT`, conflicting lengths, a header line past
/// `headerLineLimit`), it passes every later byte of the connection through untouched, so a body or a
/// tunnel is never rewritten; the parser judges what follows as it always did.
final class RawTargetEscaper: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private enum State {
        case requestLine
        case headers
        case body(remaining: Int)
        case passThrough
    }

    /// The longest header line kept for reading `Content-Length` and the like; longer lines of those
    /// fields end the rewriting.
    static let headerLineLimit = 256

    private var state = State.requestLine
    /// The request line read so far holds something besides line breaks (blank lines before a request are
    /// skipped, as the parser skips them).
    private var requestLineStarted = false
    /// The method's first bytes, to tell a `CONNECT`.
    private var method: [UInt8] = []
    private var methodDone = false
    /// The header line being read, up to `headerLineLimit` bytes, and whether it was longer.
    private var line: [UInt8] = []
    private var lineTooLong = false
    private var contentLength: Int?
    /// The request's framing is something this handler does not follow.
    private var unfollowable = false

    init() {}

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .passThrough = state {
            context.fireChannelRead(data)
            return
        }
        let buffer = unwrapInboundIn(data)
        let bytes = buffer.readableBytesView
        var escaped: ByteBuffer?
        var copied = bytes.startIndex
        var index = bytes.startIndex
        scan: while index < bytes.endIndex {
            switch state {
            case .passThrough:
                break scan
            case .body(let remaining):
                let step = min(remaining, bytes.endIndex - index)
                index += step
                if remaining == step { startRequest() } else { state = .body(remaining: remaining - step) }
            case .requestLine:
                let byte = bytes[index]
                if byte >= 0x80 {
                    if escaped == nil { escaped = context.channel.allocator.buffer(capacity: bytes.count + 32) }
                    escaped!.writeBytes(bytes[copied..<index])
                    Self.writeEscape(byte, to: &escaped!)
                    copied = index + 1
                }
                readRequestLine(byte)
                index += 1
            case .headers:
                readHeaders(bytes[index])
                index += 1
            }
        }
        guard var escaped else {
            context.fireChannelRead(data)
            return
        }
        escaped.writeBytes(bytes[copied..<bytes.endIndex])
        context.fireChannelRead(wrapInboundOut(escaped))
    }

    private static func writeEscape(_ byte: UInt8, to buffer: inout ByteBuffer) {
        let digits: [UInt8] = Array("0123456789ABCDEF".utf8)
        buffer.writeBytes([UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    private func startRequest() {
        state = .requestLine
        requestLineStarted = false
        method.removeAll(keepingCapacity: true)
        methodDone = false
        contentLength = nil
        unfollowable = false
    }

    private func readRequestLine(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\n"):
            guard requestLineStarted else { return }
            // A tunnel follows a CONNECT: its bytes are not HTTP.
            if method.elementsEqual("CONNECT".utf8) {
                state = .passThrough
                return
            }
            state = .headers
            line.removeAll(keepingCapacity: true)
            lineTooLong = false
        case UInt8(ascii: "\r"):
            return
        default:
            requestLineStarted = true
            if methodDone { return }
            if byte == UInt8(ascii: " ") || method.count > 8 {
                methodDone = true
            } else {
                method.append(byte)
            }
        }
    }

    private func readHeaders(_ byte: UInt8) {
        guard byte == UInt8(ascii: "\n") else {
            if line.count < Self.headerLineLimit {
                line.append(byte)
            } else {
                lineTooLong = true
            }
            return
        }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        if line.isEmpty && !lineTooLong {
            endOfHeaders()
            return
        }
        readField()
        line.removeAll(keepingCapacity: true)
        lineTooLong = false
    }

    /// Notes what the header line says about framing.
    private func readField() {
        // Most fields are none of the three: their names' lengths tell, with no copy.
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon == 7 || colon == 14 || colon == 17 else {
            return
        }
        let name = line[..<colon].map { $0 | 0x20 }
        let framing: [String] = ["content-length", "transfer-encoding", "upgrade"]
        guard let field = framing.first(where: { $0.utf8.elementsEqual(name) }) else { return }
        guard field == "content-length", !lineTooLong else {
            unfollowable = true
            return
        }
        let value = line[line.index(after: colon)...].drop { $0 == 0x20 || $0 == 0x09 }
        let digits = value.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            unfollowable = true
            return
        }
        let length = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        if let contentLength, contentLength != length { unfollowable = true }
        contentLength = length
    }

    private func endOfHeaders() {
        if unfollowable {
            state = .passThrough
        } else if let contentLength, contentLength > 0 {
            state = .body(remaining: contentLength)
        } else {
            startRequest()
        }
    }
}
