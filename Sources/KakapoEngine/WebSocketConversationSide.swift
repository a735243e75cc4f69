import KakapoCassette
import KakapoHTTP
import KakapoJSON
import KakapoStreams
import KakapoWebSocket

/// The server side of one replayed WebSocket conversation: plays the recording in its order. The server
/// messages before the first client message go at their offsets from the open; once a client message
/// matches the one the recording expects next, the server messages up to the following client message go
/// at their offsets counted from that client message's. `timing` scales every wait (`--stream-timing`).
/// A client message that does not match, or one more than the recording has, is a miss and closes the
/// connection with 1008; after that nothing more is played.
///
/// A client that runs ahead is compared with the next client message of the recording at once: the
/// server messages already scheduled still go first (the transport never lets a later action overtake).
/// JSON-RPC responses carrying a recorded request's id get the id the client used for it.
final class WebSocketConversationSide: WebSocketServerSide {
    private let messages: [WebSocketMessage]
    private let close: WebSocketClose?
    private let timing: StreamTiming
    private let match: WebSocketMessageMatch
    /// The next recorded message not yet played (a server one) or matched (a client one).
    private var next = 0
    /// How many client messages have matched so far.
    private var matched = 0
    /// After a miss nothing more is played. (A message after the last recorded one, even while the recorded
    /// close is on its way, is still a miss; the close already scheduled goes first.)
    private var ended = false
    /// The JSON-RPC request ids paired so far (live, recorded), latest last, at most `idPairLimit`.
    private var idPairs: [(live: JSONObject, recorded: JSONObject)] = []
    private var ids: JSONRPCReplay.IDMap?

    /// The most request id pairs kept: a long conversation's early ids are not answered late.
    static let idPairLimit = 1024
    /// The longest wait a recorded offset may ask for, in milliseconds: the cassette's own bound (a week),
    /// so every offset a cassette may hold is played as recorded (a slower `--stream-timing` is cut there).
    static let longestWait = Double(CassetteCodec.largestMilliseconds)

    init(_ conversation: WebSocketConversation, timing: StreamTiming, match: WebSocketMessageMatch) {
        messages = conversation.messages
        close = conversation.close
        self.timing = timing
        self.match = match
    }

    func opened() -> [WebSocketAction] { serverTurn(from: 0) }

    func received(_ message: WebSocketMessage.Payload) -> [WebSocketAction] {
        guard !ended else { return [] }
        let number = matched + 1
        guard next < messages.count, messages[next].from == .client else {
            let recorded = matched == 1 ? "1 message" : "\(matched) messages"
            return miss(
                "message \(number) from the client is one more than recorded: the recording has \(recorded) from the client"
            )
        }
        let expected = messages[next]
        if let difference = match.difference(message, from: expected.payload) {
            return miss("message \(number) from the client differs\(difference)")
        }
        noteIDs(live: message, recorded: expected.payload)
        matched = number
        next += 1
        return serverTurn(from: expected.offsetMilliseconds)
    }

    /// A miss: said, then the connection closed with 1008 (policy violation) and the same words as reason.
    private func miss(_ description: String) -> [WebSocketAction] {
        ended = true
        return [.miss(description), .close(code: 1008, reason: WebSocketClose.cut(description), after: .zero)]
    }

    /// The server messages from `next` up to the next client message, at their offsets from `base`; then,
    /// at the end of the recording, its close when the server sent it.
    private func serverTurn(from base: Double) -> [WebSocketAction] {
        var actions: [WebSocketAction] = []
        var last = base
        while next < messages.count, messages[next].from == .server {
            let message = messages[next]
            next += 1
            actions.append(.send(withLiveIDs(message.payload), after: wait(message.offsetMilliseconds - base)))
            last = message.offsetMilliseconds
        }
        if next == messages.count, let close, close.from == .server {
            // At its offset, or right after the last message when the recording has none.
            let at = close.offsetMilliseconds ?? last
            actions.append(.close(code: close.code, reason: close.reason, after: wait(at - base)))
        }
        return actions
    }

    /// `milliseconds` of the recording as a wait with the timing: never negative, at most `longestWait`.
    private func wait(_ milliseconds: Double) -> Duration {
        guard milliseconds.isFinite, milliseconds > 0,
            let scaled = timing.playbackMilliseconds(milliseconds), scaled.isFinite, scaled > 0
        else { return .zero }
        return .microseconds(Int64(min(scaled, Self.longestWait) * 1000))
    }

    // MARK: JSON-RPC ids

    private func noteIDs(live: WebSocketMessage.Payload, recorded: WebSocketMessage.Payload) {
        guard case .text(let liveText) = live, case .text(let recordedText) = recorded,
            let liveRequests = JSONRPCMessage.requests(inBody: Array(liveText.utf8)),
            let recordedRequests = JSONRPCMessage.requests(inBody: Array(recordedText.utf8))
        else { return }
        idPairs += zip(liveRequests, recordedRequests).map { ($0, $1) }
        if idPairs.count > Self.idPairLimit { idPairs.removeFirst(idPairs.count - Self.idPairLimit) }
        // The latest pair wins when a recorded id was used twice: IDMap keeps the first it is given.
        let map = JSONRPCReplay.IDMap(
            live: idPairs.reversed().map(\.live), recorded: idPairs.reversed().map(\.recorded))
        ids = map.isEmpty ? nil : map
    }

    /// `payload` with each JSON-RPC response carrying a recorded request's id given the live id instead.
    private func withLiveIDs(_ payload: WebSocketMessage.Payload) -> WebSocketMessage.Payload {
        guard let ids, case .text(let text) = payload else { return payload }
        let bytes = Array(text.utf8)
        let splices = JSONRPCReplay.jsonSplices(in: bytes, range: 0..<bytes.count, ids: ids)
        guard !splices.isEmpty else { return payload }
        return .text(String(decoding: AnswerSplicing.apply(splices, to: bytes), as: UTF8.self))
    }
}
