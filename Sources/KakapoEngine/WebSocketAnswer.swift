import KakapoWebSocket

/// How the engine answers a WebSocket upgrade: Kakapo plays the server side itself (a recorded
/// conversation, a route's script), or the transport tunnels the connection to the upstream, recording
/// the conversation when the mode records. The transport does the handshake and the framing; the engine
/// decides what is said.
public enum WebSocketAnswer: Sendable {
    /// Kakapo answers `101` and plays the server side.
    case play(WebSocketPlay)
    /// The upgrade goes to the upstream at `destination`, and its answer and every frame pass through;
    /// with `recording`, the conversation is recorded (`WebSocketRecorder`).
    case tunnel(WebSocketDestination, recording: WebSocketRecordingPlan?)
}
