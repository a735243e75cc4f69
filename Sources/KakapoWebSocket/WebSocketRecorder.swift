import KakapoCassette
import KakapoHTTP
import Logging

/// Records a tunnelled WebSocket conversation from the raw bytes both sides send, which pass on unchanged:
/// first the upstream's answer to the upgrade (its `101` names the subprotocol and what permessage-deflate
/// settings hold), then each side's frames, read into whole messages timed in milliseconds after the `101`
/// arrived. When the conversation ends (both closes seen, a connection gone, or Kakapo stopping) it becomes
/// ONE interaction, handed to the plan's session once: the upgrade request, the `101` with the upstream's
/// headers, and the conversation. A refusal (`403`) with a `Content-Length` body is recorded as an
/// ordinary interaction instead, so replay refuses the same way.
///
/// Bounded twice. One message (as framed, and again once inflated) may take `maximumMessageBytes`
/// (`--max-body-size`); a larger one, or a malformed frame, stops the recording (what came before is
/// kept). The conversation as a whole may take `limit` (the upstream's maximum response size), each message
/// counted as its payload plus `messageCost` bytes, so a flood of empty frames is bounded as well as a few
/// large ones; past it the messages that fit are kept. Nothing here ever stops the tunnel. Not thread-safe: the tap confines it to
/// the event loop both connections share.
package final class WebSocketRecorder {
    /// Why the recording ends.
    package enum Ending: Sendable {
        case connectionClosed
        case stopping
    }

    private enum State {
        case awaitingHead([UInt8])
        case refusal(WebSocketRecordingHead, body: [UInt8], length: Int)
        case conversation
        case done
    }

    /// What a message costs besides its payload once it is an `Interaction`'s, redacted and encoded,
    /// charged against the conversation's budget. Measured: a conversation of 1,048,576 empty messages
    /// raised kakapo's peak RSS by about 350 MiB while it became a journaled interaction (its
    /// `WebSocketMessage`s, the redacted copy and the encoded JSON, about 108 bytes a message in the file).
    package static let messageCost = 384

    private let plan: WebSocketRecordingPlan
    private let limit: Int
    private let maximumMessageBytes: Int
    /// Budget spent so far: the kept payloads plus `messageCost` for each kept message (at most `limit`).
    private var spent = 0
    private let described: String
    private let logger: Logger
    private let started = ContinuousClock.now
    private var opened = ContinuousClock.now
    private var state = State.awaitingHead([])
    private var head: WebSocketRecordingHead?
    /// Client bytes that came before the upstream's head (a client need not wait for the `101`).
    private var early: [UInt8] = []
    private var readers: [WebSocketFrameReader]
    private var inflaters: [WebSocketInflater?] = [nil, nil]
    private var messages = WebSocketRecordedMessages()
    private var close: WebSocketClose?
    private var closes = 0
    /// Set when messages stop being kept: the reason, for the log line.
    private var stopped: String?
    /// Called once the recording ended, whatever the outcome.
    package var onEnd: (() -> Void)?

    /// A recorder for `plan`: the conversation bounded by `limit` bytes (the upstream's maximum response
    /// size), one message by `maximumMessageBytes` (`--max-body-size`); `described` names the upgrade in
    /// the log (`GET /chat`, its query redacted).
    package init(
        plan: WebSocketRecordingPlan, limit: Int, maximumMessageBytes: Int, described: String, logger: Logger
    ) {
        self.plan = plan
        self.limit = max(0, limit)
        // A message larger than the whole conversation's budget could never be kept either.
        self.maximumMessageBytes = min(max(0, maximumMessageBytes), max(0, limit))
        self.described = described
        self.logger = logger
        readers = [
            WebSocketFrameReader(maximumMessageBytes: self.maximumMessageBytes),
            WebSocketFrameReader(maximumMessageBytes: self.maximumMessageBytes),
        ]
    }

    /// Whether the recording is over (handed to the session, or given up).
    package var isEnded: Bool {
        if case .done = state { return true }
        return false
    }

    /// Bytes `side` sent, as they pass.
    package func read(_ bytes: UnsafeRawBufferPointer, from side: WebSocketMessage.Sender) {
        switch state {
        case .done:
            return
        case .awaitingHead(var pending):
            guard side == .server else {
                guard early.count + bytes.count <= WebSocketRecordingHead.maximumBytes else {
                    return give(up: "the client sent more than 64 KiB before the upstream answered")
                }
                early.append(contentsOf: bytes)
                return
            }
            let searched = pending.count - 3
            pending.append(contentsOf: bytes)
            state = .done
            switch WebSocketRecordingHead.parse(pending, searchingFrom: searched) {
            case .incomplete:
                guard pending.count <= WebSocketRecordingHead.maximumBytes else {
                    return give(up: "the upstream's answer has a head larger than 64 KiB")
                }
                state = .awaitingHead(pending)
            case .malformed:
                give(up: "the upstream's answer is not an HTTP response")
            case .head(let head, let bodyStart):
                self.head = head
                let rest = Array(pending[bodyStart...])
                if head.status == 101 {
                    begin(head, rest: rest)
                } else {
                    refused(head, rest: rest)
                }
            }
        case .refusal(let head, var body, let length):
            guard side == .server else { return }
            body.append(contentsOf: bytes.prefix(length - body.count))
            state = .refusal(head, body: body, length: length)
            if body.count == length { recordRefusal(head, body: body) }
        case .conversation:
            readFrames(bytes, from: side)
        }
    }

    /// Ends the recording now: a connection closed, or Kakapo is stopping.
    package func end(_ ending: Ending) {
        switch state {
        case .done:
            return
        case .awaitingHead:
            give(up: "the connection ended before the upstream answered the upgrade")
        case .refusal(let head, _, _):
            give(up: "the connection ended before the \(head.status) answer's body")
        case .conversation:
            if ending == .stopping && close == nil { stop(because: "Kakapo stopped") }
            recordConversation()
        }
    }

    // MARK: - The upstream's answer

    private func begin(_ head: WebSocketRecordingHead, rest: [UInt8]) {
        state = .conversation
        opened = .now
        if let deflate = head.deflate {
            for index in readers.indices { readers[index].allowsCompression = true }
            inflaters = [
                WebSocketInflater(resetsEachMessage: deflate.clientResets),
                WebSocketInflater(resetsEachMessage: deflate.serverResets),
            ]
        }
        let client = early
        early = []
        client.withUnsafeBytes { readFrames($0, from: .client) }
        rest.withUnsafeBytes { readFrames($0, from: .server) }
    }

    private func refused(_ head: WebSocketRecordingHead, rest: [UInt8]) {
        guard let length = head.contentLength, length <= limit else {
            return give(
                up:
                    "the upstream answered \(head.status) without a Content-Length body within \(Self.describeConversation(limit))"
            )
        }
        let body = Array(rest.prefix(length))
        state = .refusal(head, body: body, length: length)
        if body.count == length { recordRefusal(head, body: body) }
    }

    private func recordRefusal(_ head: WebSocketRecordingHead, body: [UInt8]) {
        state = .done
        let interaction = Interaction(
            request: upgradeRequest(), response: HTTP.Response(status: head.status, headers: head.headers, body: body),
            recordedAt: UTCTimestamp.now(), durationMilliseconds: milliseconds(since: started))
        // On the event loop, which never waits for the recordings queued before this one.
        plan.session.recordWithoutWaiting(interaction, replacing: plan.replacing)
        logger.info("recorded WebSocket \(described): refused \(head.status) by the upstream")
        onEnd?()
    }

    // MARK: - The conversation

    private func readFrames(_ bytes: UnsafeRawBufferPointer, from side: WebSocketMessage.Sender) {
        let index = side == .client ? 0 : 1
        guard !readers[index].isFinished, bytes.count > 0 else { return }
        let failure = readers[index].read(bytes) { event in
            switch event {
            case .message(let isText, let compressed, let payload):
                take(payload, isText: isText, compressed: compressed, from: side)
            case .close(let code, let reason):
                closes += 1
                if close == nil { close = recordableClose(from: side, code: code, reason: reason) }
            }
        }
        switch failure {
        case .none:
            break
        case .tooLarge(let limit):
            stop(because: "a \(side.rawValue) message is larger than \(Self.describeMessage(limit))")
        case .malformed(let reason):
            stop(because: "the \(side.rawValue)'s frames are malformed (\(reason))")
        }
        if closes == 2 { recordConversation() }
    }

    private func take(_ payload: [UInt8], isText: Bool, compressed: Bool, from side: WebSocketMessage.Sender) {
        guard stopped == nil else { return }
        let offset = milliseconds(since: opened)
        // What is left for this message's payload once its cost is charged (`spent` never passes `limit`).
        let room = limit - spent - Self.messageCost
        guard room >= 0 else { return stop(because: conversationTooLarge) }
        var bytes = payload
        if compressed {
            let index = side == .client ? 0 : 1
            // Inflating stops at whichever bound comes first, so a bomb never grows past either.
            switch inflaters[index]?.inflate(payload, limit: min(maximumMessageBytes, room)) {
            case .inflated(let inflated):
                bytes = inflated
            case .tooLarge where maximumMessageBytes <= room:
                return stop(
                    because:
                        "a \(side.rawValue) message inflates to more than \(Self.describeMessage(maximumMessageBytes))"
                )
            case .tooLarge:
                return stop(because: conversationTooLarge)
            case .invalid, .none:
                return stop(because: "a \(side.rawValue) message is not valid permessage-deflate data")
            }
        }
        guard bytes.count <= room else { return stop(because: conversationTooLarge) }
        spent += Self.messageCost + bytes.count
        messages.append(from: side, isText: isText, offsetMilliseconds: offset, payload: bytes)
    }

    /// The close as a cassette can hold it. A peer's close may carry what no close frame may (a code
    /// RFC 6455 reserves or leaves out, such as 0, 1005 or 65535; a reason that is not UTF-8): that is
    /// recorded as a close without a code (and so without a reason), a reason that is not UTF-8 is left out
    /// (one too long is cut to what a frame holds), and the log says what was dropped, so the conversation
    /// is still recorded and replays.
    private func recordableClose(from side: WebSocketMessage.Sender, code: Int?, reason bytes: [UInt8])
        -> WebSocketClose
    {
        var dropped: [String] = []
        var kept = code
        if let code, !WebSocketClose.isSendable(code) {
            kept = nil
            dropped.append("its code \(code) may not be sent (RFC 6455 7.4), so it is recorded without one")
        }
        var reason = String(validating: bytes, as: UTF8.self) ?? ""
        if kept == nil && !bytes.isEmpty {
            // A close frame carries a reason only after a code.
            reason = ""
            dropped.append("its reason goes with it (a close without a code carries none)")
        } else if reason.isEmpty && !bytes.isEmpty {
            dropped.append("its \(bytes.count)-byte reason is not UTF-8 and is left out")
        } else if reason.utf8.count > WebSocketClose.largestReasonBytes {
            reason = WebSocketClose.cut(reason)
            dropped.append("its reason is cut to \(WebSocketClose.largestReasonBytes) bytes")
        }
        if !dropped.isEmpty {
            logger.warning("WebSocket \(described): the \(side.rawValue)'s close: \(dropped.joined(separator: "; "))")
        }
        return WebSocketClose(from: side, code: kept, reason: reason, offsetMilliseconds: milliseconds(since: opened))
    }

    /// Keeps no more messages (the ones so far are recorded at the end), warning once.
    private func stop(because reason: String) {
        guard stopped == nil else { return }
        stopped = reason
        logger.warning(
            "WebSocket \(described): recording stopped after \(messages.count) messages: \(reason); the tunnel goes on"
        )
    }

    private func recordConversation() {
        guard case .conversation = state, let head else { return }
        state = .done
        let conversation = WebSocketConversation(
            subprotocol: head.subprotocol, messages: messages.messages(), close: close)
        messages = WebSocketRecordedMessages()
        let interaction = Interaction(
            request: upgradeRequest(), response: HTTP.Response(status: 101, headers: head.headers),
            recordedAt: UTCTimestamp.now(),
            durationMilliseconds: (opened - started) / .milliseconds(1), webSocket: conversation)
        // On the event loop, which never waits for the recordings queued before this one.
        plan.session.recordWithoutWaiting(interaction, replacing: plan.replacing)
        let counts = conversation.counts
        let ending =
            close.map { close in
                "closed \(close.code.map(String.init) ?? "without a code") by the \(close.from.rawValue)"
            } ?? "not closed"
        logger.info(
            "recorded WebSocket \(described): \(counts.client) client and \(counts.server) server messages, \(ending)\(stopped.map { " (stopped early: \($0))" } ?? "")"
        )
        onEnd?()
    }

    /// Nothing is recorded.
    private func give(up reason: String) {
        state = .done
        logger.warning("WebSocket \(described) not recorded: \(reason)")
        onEnd?()
    }

    // MARK: - Helpers

    /// The upgrade as it went upstream, still reading as an upgrade (the hop-by-hop `Upgrade` and
    /// `Connection` fields that preparing it for libcurl removed are put back).
    private func upgradeRequest() -> HTTP.Request {
        var request = plan.request
        if request.headers["Upgrade"] == nil { request.headers.add(name: "Upgrade", value: "websocket") }
        if request.headers["Connection"] == nil { request.headers.add(name: "Connection", value: "Upgrade") }
        return request
    }

    private func milliseconds(since instant: ContinuousClock.Instant) -> Double {
        max(0, (ContinuousClock.now - instant) / .milliseconds(1))
    }

    private var conversationTooLarge: String {
        "the conversation is past \(Self.describeConversation(limit)), counting \(Self.messageCost) bytes a message besides its payload"
    }

    /// A size as the warnings name it: whole MiB when it is some, else bytes.
    static func describe(size: Int) -> String {
        size >= 1 << 20 && size & ((1 << 20) - 1) == 0 ? "\(size >> 20) MiB" : "\(size) bytes"
    }

    /// One message's bound as the warnings name it, with the flag that sets it.
    static func describeMessage(_ limit: Int) -> String {
        "--max-body-size (\(describe(size: limit)))"
    }

    /// The conversation's bound as the warnings name it.
    static func describeConversation(_ limit: Int) -> String {
        "\(describe(size: limit)) (the maximum response size)"
    }
}
