import KakapoCassette
import KakapoHTTP

/// Where a tunnelled WebSocket conversation is recorded: the cassette session, whether it replaces an
/// earlier recording of the same upgrade (mode `all`), and the upgrade request as it went upstream.
public struct WebSocketRecordingPlan: Sendable {
    /// The cassette session the conversation's interaction is recorded into.
    public let session: CassetteSession
    /// Whether the recording replaces an earlier one of the same upgrade (mode `all`) rather than adding one.
    public let replacing: Bool
    /// The upgrade request as the upstream got it (its origin set), before redaction.
    public let request: HTTP.Request

    /// A plan recording into `session` the conversation of `request`.
    public init(session: CassetteSession, replacing: Bool, request: HTTP.Request) {
        self.session = session
        self.replacing = replacing
        self.request = request
    }
}
