import KakapoCassette
import KakapoHTTP

/// Where a tunnelled WebSocket conversation is recorded: the cassette session, whether it replaces an
/// earlier recording of the same upgrade (mode `all`), and the upgrade request as it went upstream.
public struct WebSocketRecordingPlan: Sendable {
    public let session: CassetteSession
    public let replacing: Bool
    /// The upgrade request as the upstream got it (its origin set), before redaction.
    public let request: HTTP.Request

    public init(session: CassetteSession, replacing: Bool, request: HTTP.Request) {
        self.session = session
        self.replacing = replacing
        self.request = request
    }
}
