import Foundation
import KakapoHTTP
import NIOCore
import NIOPosix
import Synchronization

/// A real WebSocket client for tests, on SwiftNIO: connects (directly, or through an HTTP proxy's
/// `CONNECT`, with TLS when a test adds it), does the RFC 6455 handshake with any subprotocols and
/// headers, sends text, binary, pings, closes and, for hostile-input tests, any frame or raw bytes, and
/// receives the server's messages (fragments joined) with the time each arrived, its pings, pongs and close.
///
///     let client = try await WebSocketClient.connect(port: port, path: "/chat", subprotocols: ["chat"])
///     #expect(client.handshake.status == 101)
///     try client.send(text: "hello")
///     let reply = try #require(await client.nextMessage())
///     #expect(reply.payload == .text("hi"))
///     #expect(await client.closeFrame()?.code == 1000)
public final class WebSocketClient: Sendable {
    /// The server's answer to the upgrade.
    public struct Handshake: Sendable {
        public let status: Int
        /// The head as text (status line and fields), for messages.
        public let head: String
        public let headers: [(name: String, value: String)]
        /// The body after a head that is not `101` (what arrived of it within the wait).
        public let body: String

        /// The values of the field `name` (any case).
        public func values(_ name: String) -> [String] {
            headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
        }

        /// The subprotocol the server chose; nil for none.
        public var subprotocol: String? { values("Sec-WebSocket-Protocol").first }
    }

    /// A whole message from the server and when its last byte arrived.
    public struct Message: Sendable, Equatable {
        public let payload: WebSocketMessage.Payload
        public let arrived: ContinuousClock.Instant

        /// The text of a text message; nil for a binary one.
        public var text: String? {
            if case .text(let text) = payload { return text }
            return nil
        }
    }

    /// What the server sent, in order.
    public enum Event: Sendable, Equatable {
        case message(Message)
        /// A close frame: its code (nil when it had none) and reason.
        case close(code: Int?, reason: String, arrived: ContinuousClock.Instant)
        case ping([UInt8])
        case pong([UInt8])
    }

    /// A failure to connect or to speak to the server.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private struct State {
        /// Bytes not yet parsed (the head before the handshake, partial frames after it).
        var raw: [UInt8] = []
        /// After the `101`: bytes are parsed as frames as they arrive (so arrival times are exact).
        var framing = false
        var events: [Event] = []
        var taken = 0
        /// A fragmented message being joined: text or not, and the bytes so far.
        var partial: (text: Bool, bytes: [UInt8])?
        /// The connection is gone (closed by either side, or the server sent something unreadable).
        var disconnected = false
        var version = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0

        mutating func changed() -> [CheckedContinuation<Void, Never>] {
            version += 1
            let resumed = Array(waiters.values)
            waiters = [:]
            return resumed
        }
    }

    /// The largest frame from the server the client takes: tests send small ones.
    static let maximumFrameBytes = 64 << 20

    private let channel: any Channel
    private let state = Mutex(State())
    /// The server's answer to the upgrade; set once by `connect`.
    public var handshake: Handshake { handshakeBox.withLock { $0! } }
    private let handshakeBox = Mutex<Handshake?>(nil)
    /// When the `101` arrived: the origin of a conversation's offsets.
    public var opened: ContinuousClock.Instant { openedBox.withLock { $0 } }
    private let openedBox = Mutex(ContinuousClock.now)

    private init(channel: any Channel) {
        self.channel = channel
    }

    /// Connects to `host:port` and asks to upgrade `path`. With `proxy` (the port of an HTTP proxy on
    /// `proxyHost`), it first asks the proxy to `CONNECT` to `authority` (default `host:port`); with `tls`, a closure that adds a
    /// TLS client handler to the channel (first in its pipeline), the upgrade goes over TLS. A handshake
    /// that is not answered `101` still returns a client: its `handshake` says what came instead.
    public static func connect(
        host: String = "127.0.0.1", port: Int, path: String = "/", subprotocols: [String] = [],
        headers: [(String, String)] = [], proxy: Int? = nil, proxyHost: String = "127.0.0.1", authority: String? = nil,
        tls: (@Sendable (any Channel) throws -> Void)? = nil, timeout: Duration = .seconds(10)
    ) async throws -> WebSocketClient {
        let box = Mutex<WebSocketClient?>(nil)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(5))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Reader { box.withLock { $0 } })
                }
            }
            .connect(host: proxy == nil ? host : proxyHost, port: proxy ?? port).get()
        let client = WebSocketClient(channel: channel)
        box.withLock { $0 = client }
        let target = authority ?? "\(host):\(port)"
        if proxy != nil {
            try client.write(Array("CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n\r\n".utf8))
            guard let head = await client.readHead(timeout: timeout), head.status == 200 else {
                client.disconnect()
                throw Failure(description: "the proxy refused CONNECT \(target)")
            }
        }
        if let tls {
            try await channel.eventLoop.submit { try tls(channel) }.get()
        }
        var request = "GET \(path) HTTP/1.1\r\nHost: \(target)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: \(randomKey())\r\nSec-WebSocket-Version: 13\r\n"
        if !subprotocols.isEmpty { request += "Sec-WebSocket-Protocol: \(subprotocols.joined(separator: ", "))\r\n" }
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try client.write(Array((request + "\r\n").utf8))
        guard let head = await client.readHead(timeout: timeout, startFraming: true) else {
            client.disconnect()
            throw Failure(description: "no answer to the WebSocket upgrade within \(timeout)")
        }
        var body = ""
        if head.status != 101 {
            // Whatever of the body comes before the server closes (Kakapo's errors close the connection).
            _ = await client.wait(timeout: .seconds(2)) { $0.disconnected ? true : nil }
            body = client.state.withLock { String(decoding: $0.raw, as: UTF8.self) }
        }
        client.handshakeBox.withLock {
            $0 = Handshake(status: head.status, head: head.text, headers: head.fields, body: body)
        }
        return client
    }

    // MARK: Sending

    /// Sends a text message in one masked frame.
    public func send(text: String) throws { try sendFrame(opcode: 0x1, payload: Array(text.utf8)) }

    /// Sends a binary message in one masked frame.
    public func send(binary: [UInt8]) throws { try sendFrame(opcode: 0x2, payload: binary) }

    /// Sends a ping.
    public func ping(_ payload: [UInt8] = []) throws { try sendFrame(opcode: 0x9, payload: payload) }

    /// Sends a close frame with `code` (none when nil) and `reason`.
    public func close(code: Int? = 1000, reason: String = "") throws {
        var payload: [UInt8] = []
        if let code { payload = [UInt8(truncatingIfNeeded: code >> 8), UInt8(truncatingIfNeeded: code)] }
        if code != nil { payload += Array(reason.utf8) }
        try sendFrame(opcode: 0x8, payload: payload)
    }

    /// Sends one frame as given: `masked` false, reserved bits or an unknown opcode make it one a server
    /// must refuse.
    public func sendFrame(
        fin: Bool = true, opcode: UInt8, payload: [UInt8], masked: Bool = true, reservedBits: UInt8 = 0
    ) throws {
        try write(Self.frame(fin: fin, opcode: opcode, payload: payload, masked: masked, reservedBits: reservedBits))
    }

    /// Writes `bytes` to the connection as they are.
    public func sendRaw(_ bytes: [UInt8]) throws { try write(bytes) }

    /// A client frame's bytes (RFC 6455 5.2).
    public static func frame(
        fin: Bool = true, opcode: UInt8, payload: [UInt8], masked: Bool = true, reservedBits: UInt8 = 0
    ) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | (reservedBits & 0x70) | (opcode & 0x0F)]
        let maskBit: UInt8 = masked ? 0x80 : 0
        switch payload.count {
        case ..<126:
            bytes.append(maskBit | UInt8(payload.count))
        case ..<65536:
            bytes.append(maskBit | 126)
            bytes += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default:
            bytes.append(maskBit | 127)
            bytes += (0..<8).reversed().map { UInt8(truncatingIfNeeded: payload.count >> ($0 * 8)) }
        }
        guard masked else { return bytes + payload }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        return bytes + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    private func write(_ bytes: [UInt8]) throws {
        guard channel.isActive else { throw Failure(description: "the connection is closed") }
        channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
    }

    // MARK: Receiving

    /// The next thing the server sent, waiting up to `timeout`; nil when nothing came (or the connection ended).
    public func receive(timeout: Duration = .seconds(10)) async -> Event? {
        await wait(timeout: timeout) { state in
            guard state.taken < state.events.count else { return nil }
            state.taken += 1
            return state.events[state.taken - 1]
        }
    }

    /// The next message from the server, skipping pings and pongs; nil when a close, the end or the
    /// timeout came first (a close stays to be read by `closeFrame`).
    public func nextMessage(timeout: Duration = .seconds(10)) async -> Message? {
        await wait(timeout: timeout) { state -> Message?? in
            while state.taken < state.events.count {
                switch state.events[state.taken] {
                case .message(let message):
                    state.taken += 1
                    return .some(message)
                case .close:
                    return .some(nil)
                case .ping, .pong:
                    state.taken += 1
                }
            }
            return state.disconnected ? .some(nil) : nil
        } ?? nil
    }

    /// The server's close frame, skipping whatever comes before it; nil when the connection ended or the
    /// timeout passed without one.
    public func closeFrame(timeout: Duration = .seconds(10)) async -> (code: Int?, reason: String)? {
        await wait(timeout: timeout) { state -> (Int?, String)?? in
            while state.taken < state.events.count {
                state.taken += 1
                if case .close(let code, let reason, _) = state.events[state.taken - 1] { return .some((code, reason)) }
            }
            return state.disconnected ? .some(nil) : nil
        }.flatMap { $0 }.map { (code: $0.0, reason: $0.1) }
    }

    /// The next pong, skipping messages (they stay unread only if `receive` is not used meanwhile).
    public func nextPong(timeout: Duration = .seconds(10)) async -> [UInt8]? {
        await wait(timeout: timeout) { state in
            for index in state.taken..<state.events.count {
                if case .pong(let bytes) = state.events[index] { return bytes }
            }
            return nil
        }
    }

    /// Everything the server has sent so far, read or not.
    public var events: [Event] { state.withLock { $0.events } }

    /// Waits until the connection has ended (true) or `timeout` passed (false).
    public func waitForDisconnect(timeout: Duration = .seconds(10)) async -> Bool {
        await wait(timeout: timeout) { $0.disconnected ? true : nil } ?? false
    }

    /// Whether the connection is still open.
    public var isConnected: Bool { !state.withLock { $0.disconnected } }

    /// Closes the TCP connection at once, with no close frame.
    public func disconnect() {
        channel.close(promise: nil)
    }

    // MARK: Internals

    private struct Head {
        let status: Int
        let text: String
        let fields: [(name: String, value: String)]
    }

    /// Reads an HTTP response head off the raw bytes; with `startFraming` and a `101`, what follows is
    /// parsed as frames from then on.
    private func readHead(timeout: Duration, startFraming: Bool = false) async -> Head? {
        await wait(timeout: timeout) { state -> Head? in
            let end: [UInt8] = [13, 10, 13, 10]
            guard let index = state.raw.indices.first(where: { state.raw[$0...].starts(with: end) }) else {
                return nil
            }
            let text = String(decoding: state.raw[..<index], as: UTF8.self)
            state.raw.removeFirst(index + 4)
            let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
            let parts = lines.first?.split(separator: " ") ?? []
            let status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            let fields = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (
                    String(line[..<colon]),
                    String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
                )
            }
            if startFraming && status == 101 {
                state.framing = true
                Self.parseFrames(&state, arrived: .now)
            }
            return Head(status: status, text: text, fields: fields)
        }
    }

    /// Waits until `check` finds what it looks for (called under the lock on every change), or `timeout`.
    private func wait<T>(timeout: Duration, _ check: (inout State) -> T?) async -> T? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let id: Int? = state.withLock { state in
                state.nextWaiter += 1
                return state.nextWaiter
            }
            let (found, version): (T?, Int) = state.withLock { (check(&$0), $0.version) }
            if let found { return found }
            if ContinuousClock.now >= deadline { return nil }
            guard let id else { return nil }
            let remaining = deadline - ContinuousClock.now
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let registered = state.withLock { state -> Bool in
                    guard state.version == version else { return false }
                    state.waiters[id] = continuation
                    return true
                }
                guard registered else { return continuation.resume() }
                let nanoseconds =
                    remaining.components.seconds * 1_000_000_000 + remaining.components.attoseconds
                    / 1_000_000_000
                channel.eventLoop.scheduleTask(in: .nanoseconds(max(nanoseconds, 0))) { [state = self] in
                    state.timeOut(id)
                }
            }
        }
    }

    private func timeOut(_ id: Int) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.resume()
    }

    fileprivate func received(_ buffer: ByteBuffer) {
        let arrived = ContinuousClock.now
        let waiters = state.withLock { state in
            state.raw += buffer.readableBytesView
            if state.framing { Self.parseFrames(&state, arrived: arrived) }
            return state.changed()
        }
        for waiter in waiters { waiter.resume() }
    }

    fileprivate func ended() {
        let waiters = state.withLock { state in
            state.disconnected = true
            return state.changed()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Takes every whole frame off `state.raw` (server frames: unmasked, but a mask is undone if present).
    private static func parseFrames(_ state: inout State, arrived: ContinuousClock.Instant) {
        var offset = 0
        defer { state.raw.removeFirst(offset) }
        let raw = state.raw
        while raw.count - offset >= 2 {
            let first = raw[offset]
            let second = raw[offset + 1]
            var header = 2
            var length = Int(second & 0x7F)
            if length == 126 {
                guard raw.count - offset >= 4 else { return }
                length = Int(raw[offset + 2]) << 8 | Int(raw[offset + 3])
                header = 4
            } else if length == 127 {
                guard raw.count - offset >= 10 else { return }
                var value: UInt64 = 0
                for index in 2..<10 { value = value << 8 | UInt64(raw[offset + index]) }
                guard value <= UInt64(maximumFrameBytes) else {
                    state.disconnected = true
                    return
                }
                length = Int(value)
                header = 10
            }
            let masked = second & 0x80 != 0
            let mask = masked ? 4 : 0
            guard raw.count - offset >= header + mask + length else { return }
            var payload = Array(raw[(offset + header + mask)..<(offset + header + mask + length)])
            if masked {
                let key = Array(raw[(offset + header)..<(offset + header + 4)])
                for index in payload.indices { payload[index] ^= key[index % 4] }
            }
            offset += header + mask + length
            let fin = first & 0x80 != 0
            switch first & 0x0F {
            case 0x1, 0x2:
                state.partial = (first & 0x0F == 0x1, payload)
            case 0x0:
                state.partial?.bytes += payload
            case 0x8:
                let code = payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : nil
                let reason = payload.count > 2 ? String(decoding: payload[2...], as: UTF8.self) : ""
                state.events.append(.close(code: code, reason: reason, arrived: arrived))
                continue
            case 0x9:
                state.events.append(.ping(payload))
                continue
            case 0xA:
                state.events.append(.pong(payload))
                continue
            default:
                state.disconnected = true
                return
            }
            if fin, let partial = state.partial {
                state.partial = nil
                let message: WebSocketMessage.Payload =
                    partial.text ? .text(String(decoding: partial.bytes, as: UTF8.self)) : .binary(partial.bytes)
                state.events.append(.message(Message(payload: message, arrived: arrived)))
            }
        }
    }

    private static func randomKey() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        // 16 random bytes in base64: 21 full characters, one from the last byte's top bits, then `==`.
        let body = (0..<21).map { _ in alphabet[Int.random(in: 0..<64)] }
        let last = alphabet[Int.random(in: 0..<4) * 16]
        return String(body) + String(last) + "=="
    }

    /// Hands the connection's bytes and its end to the client.
    private final class Reader: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private let client: @Sendable () -> WebSocketClient?

        init(client: @escaping @Sendable () -> WebSocketClient?) {
            self.client = client
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            client()?.received(unwrapInboundIn(data))
        }

        func channelInactive(context: ChannelHandlerContext) {
            client()?.ended()
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
