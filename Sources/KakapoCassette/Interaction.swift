import Foundation
import KakapoHTTP

/// One recorded exchange: the request as it was sent upstream and the response that came back.
public struct Interaction: Hashable, Sendable {
    public var request: HTTP.Request
    public var response: HTTP.Response
    /// When the response was received, as an ISO 8601 timestamp (`2026-11-22T06:30:00.123Z`).
    public var recordedAt: String
    /// How long the upstream took to answer, in milliseconds.
    public var durationMilliseconds: Double
    /// For a streamed answer (server-sent events), its pieces with their timing; `response.body` is
    /// then their bytes joined. Nil for an ordinary answer.
    public var chunks: [ResponseChunk]?
    /// The upstream broke the stream off after `chunks` (`--record-broken-streams`): it is replayed as the
    /// same break, the connection closed after the last chunk.
    public var brokenOff = false
    /// The client left before the end of the stream (it stopped reading, or cancelled its gRPC call): `chunks`
    /// are what had come by then. Replayed up to there, then held open (until the client leaves or the idle
    /// timeout); closed as a break instead when `brokenOff` is set too.
    public var abandoned = false
    /// For a WebSocket upgrade answered `101`, the conversation that followed; nil for every other exchange.
    public var webSocket: WebSocketConversation?
    /// The sources (`header x-csrf-token`, `query state`) of the placeholders in the response that stand for
    /// echoes of the request's secrets, written by recording (`Redactor+Echoes.swift`): replay gives the live
    /// request's values back for these alone, so text an upstream sent that looks like such a placeholder is
    /// never filled in. Empty for most interactions.
    public var echoSources: [String] = []
    /// The places of the request and the response whose values change from call to call (`volatile`):
    /// matching ignores the request's, `verify` the response's. Empty for most interactions.
    public var volatile = VolatileFields()

    public init(
        request: HTTP.Request, response: HTTP.Response, recordedAt: String, durationMilliseconds: Double,
        chunks: [ResponseChunk]? = nil, brokenOff: Bool = false, webSocket: WebSocketConversation? = nil,
        abandoned: Bool = false
    ) {
        self.request = request
        self.response = response
        self.recordedAt = recordedAt
        self.durationMilliseconds = durationMilliseconds
        self.chunks = chunks
        self.brokenOff = brokenOff
        self.abandoned = abandoned
        self.webSocket = webSocket
    }
}

extension Interaction {
    /// `recordedAt` as a date; nil when it is missing or not ISO 8601.
    public var recordedDate: Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: recordedAt) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: recordedAt)
    }
}
