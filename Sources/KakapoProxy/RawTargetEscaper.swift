import KakapoHTTP
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

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
///
/// It runs on every connection, so header lines are not read byte by byte: it jumps to each line's end
/// (`memchr`) and copies at most `headerLineLimit` bytes of it (tools/bench-escaper measures this).
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
    /// How many bytes of the header line being read are kept (at most `headerLineLimit`).
    var keptHeaderBytes: Int { line.count }
    private var contentLength: Int?
    /// The request's framing is something this handler does not follow.
    private var unfollowable = false

    init() {}

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .passThrough = state {
            context.fireChannelRead(data)
            return
        }
        guard let escaped = escaping(unwrapInboundIn(data), allocator: context.channel.allocator) else {
            context.fireChannelRead(data)
            return
        }
        context.fireChannelRead(wrapInboundOut(escaped))
    }

    /// One read of the connection: the bytes with their request lines escaped, or nil when they pass as
    /// they are (always so once framing is not followed).
    func escaping(_ buffer: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer? {
        if case .passThrough = state { return nil }
        return buffer.withUnsafeReadableBytes { scan($0, allocator: allocator) }
    }

    /// Follows `bytes` (one read) through the states; returns them with their request lines escaped, or
    /// nil when nothing needed escaping.
    private func scan(_ bytes: UnsafeRawBufferPointer, allocator: ByteBufferAllocator) -> ByteBuffer? {
        guard let base = bytes.baseAddress else { return nil }
        let end = bytes.count
        var escaped: ByteBuffer?
        var copied = 0
        var index = 0
        scan: while index < end {
            switch state {
            case .passThrough:
                break scan
            case .body(let remaining):
                let step = min(remaining, end - index)
                index += step
                if remaining == step { startRequest() } else { state = .body(remaining: remaining - step) }
            case .requestLine:
                let byte = bytes[index]
                if byte >= 0x80 {
                    if escaped == nil { escaped = allocator.buffer(capacity: end + 32) }
                    escaped!.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[copied..<index]))
                    writePercentEscape(of: byte) { escaped!.writeInteger($0) }
                    copied = index + 1
                }
                readRequestLine(byte)
                index += 1
            case .headers:
                let found = memchr(base + index, Int32(UInt8(ascii: "\n")), end - index)
                let stop = found.map { base.distance(to: UnsafeRawPointer($0)) } ?? end
                keep(UnsafeRawBufferPointer(rebasing: bytes[index..<stop]))
                index = stop
                if found != nil {
                    endHeaderLine()
                    index += 1
                }
            }
        }
        guard var escaped else { return nil }
        escaped.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[copied..<end]))
        return escaped
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

    /// Keeps what fits of a piece of the header line being read (no line break in it).
    private func keep(_ piece: UnsafeRawBufferPointer) {
        let room = Self.headerLineLimit - line.count
        if piece.count > room {
            line.append(contentsOf: piece.prefix(room))
            lineTooLong = true
        } else {
            line.append(contentsOf: piece)
        }
    }

    private func endHeaderLine() {
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        if line.isEmpty && !lineTooLong {
            endOfHeaders()
            return
        }
        readField()
        line.removeAll(keepingCapacity: true)
        lineTooLong = false
    }

    private static let contentLength = Array("content-length".utf8)
    private static let transferEncoding = Array("transfer-encoding".utf8)
    private static let upgrade = Array("upgrade".utf8)

    /// Whether the line starts with `name` (lower case) then a colon, letters compared in any case.
    private func lineNames(_ name: [UInt8]) -> Bool {
        guard line.count > name.count, line[name.count] == UInt8(ascii: ":") else { return false }
        for offset in 0..<name.count {
            var byte = line[offset]
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte |= 0x20 }
            if byte != name[offset] { return false }
        }
        return true
    }

    /// Notes what the header line says about framing.
    private func readField() {
        if lineNames(Self.transferEncoding) || lineNames(Self.upgrade) {
            unfollowable = true
            return
        }
        guard lineNames(Self.contentLength) else { return }
        guard !lineTooLong else {
            unfollowable = true
            return
        }
        let value = line[(Self.contentLength.count + 1)...].drop { $0 == 0x20 || $0 == 0x09 }
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
