import KakapoEngine
import KakapoHTTP
import KakapoWebSocket
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// Answers a WebSocket upgrade itself and plays a `WebSocketPlay` (a recorded conversation, a route's
/// script): checks the handshake (400 when it is not RFC 6455's), answers `101` with the accept value
/// NIO computes and the play's subprotocol, then turns the connection into frames (NIO's decoder and
/// encoder) with a `WebSocketPlayer` doing what the play's server side says.
///
/// Never negotiates an extension: permessage-deflate is declined by leaving it out of the `101`, which
/// RFC 7692 5 allows, so every frame is plain and what is played is exactly what was recorded.
enum WebSocketServing {
    /// Why `head` is not an RFC 6455 handshake Kakapo can answer (a missing or malformed key, another
    /// version), with the fields the `400` carries; nil when it is one. The one place that decides: the
    /// handler asks before it journals the upgrade, so a refused handshake is journaled `400`, not `101`.
    static func handshakeProblem(_ head: HTTPRequestHead) -> (reason: String, headers: [(String, String)])? {
        let keys = head.headers["Sec-WebSocket-Key"]
        guard keys.count == 1, isKey(keys[0]) else {
            return ("a WebSocket upgrade needs one Sec-WebSocket-Key of 16 bytes in base64 (RFC 6455 4.1)", [])
        }
        guard head.headers["Sec-WebSocket-Version"] == ["13"] else {
            return (
                "a WebSocket upgrade needs Sec-WebSocket-Version: 13, the only version Kakapo speaks (RFC 6455 4.4)",
                [("Sec-WebSocket-Version", "13")]
            )
        }
        return nil
    }

    /// Answers the upgrade `head` with `101` and plays `play`; the caller has checked the handshake with
    /// `handshakeProblem(_:)` (a handshake that fails it anyway is answered `400`).
    static func start(
        _ play: WebSocketPlay, for head: HTTPRequestHead, request: HTTP.Request, settings: HTTPConnectionSettings,
        errors: ErrorWriter, context: ChannelHandlerContext
    ) {
        let pipeline = settings.pipeline
        if let problem = handshakeProblem(head) {
            return errors.write(
                problem.reason, status: .badRequest, headers: problem.headers, version: head.version, context: context)
        }
        var extra = HTTPHeaders()
        if let subprotocol = play.subprotocol {
            // Only one the client offered, and only a token: a cassette's text never becomes a header of its own.
            if request.offeredWebSocketSubprotocols.contains(subprotocol), isToken(subprotocol) {
                extra.add(name: "Sec-WebSocket-Protocol", value: subprotocol)
            } else {
                pipeline.logger.warning(
                    "\(head.method) \(pipeline.loggable(head.uri)): WebSocket subprotocol \(subprotocol) left out of the 101: the client did not offer it"
                )
            }
        }
        let answerHeaders = extra
        let maximumFrame = min(max(settings.maximumBodyBytes, 125), Int(UInt32.max))
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: maximumFrame, automaticErrorHandling: false,
            shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(answerHeaders) },
            upgradePipelineHandler: { channel, _ in channel.eventLoop.makeSucceededVoidFuture() })
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        upgrader.buildUpgradeResponse(channel: context.channel, upgradeRequest: head, initialResponseHeaders: [:])
            .whenComplete { result in
                let context = bound.value
                switch result {
                case .success(let headers):
                    upgrade(
                        context.channel, headers: headers, play: play, request: request, maximumFrame: maximumFrame,
                        settings: settings)
                case .failure(let error):
                    errors.write(
                        "the WebSocket handshake was refused: \(error)", status: .badRequest, version: head.version,
                        context: context)
                }
            }
    }

    /// Writes the `101` below the HTTP encoder, takes the HTTP handlers and the request deadline out, and
    /// puts the frame decoder, the encoder and the player in.
    private static func upgrade(
        _ channel: any Channel, headers: HTTPHeaders, play: WebSocketPlay, request: HTTP.Request, maximumFrame: Int,
        settings: HTTPConnectionSettings
    ) {
        let operations = channel.pipeline.syncOperations
        guard let encoder = try? operations.context(handlerType: HTTPResponseEncoder.self) else {
            channel.close(promise: nil)
            return
        }
        var response = ByteBuffer(string: "HTTP/1.1 101 Switching Protocols\r\n")
        for (name, value) in headers { response.writeString("\(name): \(value)\r\n") }
        response.writeString("\r\n")
        encoder.writeAndFlush(NIOAny(response), promise: nil)
        let timeouts = try? operations.handler(type: ConnectionTimeoutHandler.self)
        HTTPConnectionSettings.removeHTTPHandlers(from: operations)
        if let timeouts { operations.removeHandler(timeouts, promise: nil) }
        let pipeline = settings.pipeline
        let limits = WebSocketPlayer.Limits(messageBytes: settings.maximumBodyBytes, idleTimeout: timeouts?.idleTimeout)
        let player = WebSocketPlayer(side: play.makeSide(), limits: limits) { description in
            pipeline.webSocketMiss(request, description)
            play.onMiss?(description)
        }
        do {
            try operations.addHandler(ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: maximumFrame)))
            try operations.addHandler(WebSocketFrameEncoder())
            try operations.addHandler(player)
        } catch {
            channel.close(promise: nil)
            return
        }
        // The HTTP pipelining handler may have held back a read while the upgrade was answered.
        channel.read()
    }

    /// Whether `key` is 24 characters of base64 ending `==`: 16 bytes, as RFC 6455 4.1 asks.
    private static func isKey(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard bytes.count == 24, bytes[22] == UInt8(ascii: "="), bytes[23] == UInt8(ascii: "=") else { return false }
        return bytes[..<22].allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
                true
            default: false
            }
        }
    }

    /// RFC 9110 `token`, what a subprotocol name is made of (RFC 6455 4.1).
    private static func isToken(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "A")...UInt8(ascii: "Z"):
                    true
                default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }
}
