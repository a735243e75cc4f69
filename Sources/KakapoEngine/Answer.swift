import KakapoCassette
import KakapoHTTP
import KakapoJSON
import KakapoStreams
import KakapoStubs
import KakapoUpstream

/// What the engine answers a request with: a response (status, headers and a body that is bytes, a
/// recorded stream or a live one) or a broken connection, together with the layer that produced it and
/// how long to wait before delivering it. Every transport (the NIO server, Kakapo in process) delivers
/// this one type.
public struct Answer: Sendable {
    /// A response's body.
    public enum Body: Sendable {
        /// The whole body.
        case bytes([UInt8])
        /// A recorded stream: its chunks with their offsets, delivered with their recorded gaps as
        /// `--stream-timing` says. The body is their bytes joined.
        case recorded([ResponseChunk])
        /// An answer still streaming from the upstream (an event stream, a body of unknown or large size).
        case live(LiveResponse)
    }

    /// What goes back to the client.
    public enum Outcome: Sendable {
        /// A response.
        case response(status: Int, headers: HTTP.Headers, body: Body)
        /// No response: the connection fails the way a route's fault says.
        case fault(Fault.Kind)
        /// The connection becomes a WebSocket (an upgrade request only): played by Kakapo or tunnelled.
        case webSocket(WebSocketAnswer)
    }

    /// The response, or the fault that breaks the connection instead.
    public var outcome: Outcome
    /// The layer that answered (`X-Kakapo-Source`, the journal, the summary).
    public var source: ResponseSource
    /// How long the transport waits before delivering (a route's latency); it never blocks a thread.
    public var delay: Duration = .zero
    /// Set when the upstream failed and the answer is the 502 or 504 that says so.
    public var upstreamError: UpstreamError?
    /// The position in the server's cassette of the recording this answer replays as it is (the same
    /// bytes every time), so a transport may keep its wire form; nil for every other answer.
    package var replay: Int?
    /// For a replay whose recorded times were moved to now (`ReplayTime`), the second they were moved to:
    /// its wire form is kept for that second only. Zero for an answer whose bytes never change.
    package var replaySecond: Int64 = 0
    /// The position of the recording this answer replays in its cassette (the server's or a session's),
    /// for the inspector; nil for every other answer.
    package var interaction: Int?
    /// The id of the cassette session that answered, for the inspector; nil outside sessions.
    package var session: String?
    /// An upstream answer that is written into a cassette (the inspector's source `recorded`).
    package var recorded = false
    /// A miss's line (`MissReport.line`), for the journal and the summary; nil for every other answer.
    package var missLine: String?
    /// A recorded stream that the upstream broke off when recorded: its transport breaks it off the same way
    /// after the last chunk, instead of ending it.
    public var breaksOff = false
    /// A recorded stream its client abandoned when recorded (and not broken off): its transport sends nothing
    /// after the last chunk and keeps the stream open until the client leaves (or the idle timeout passes).
    public var holdsOpen = false
    /// Fields sent after the body (gRPC's `grpc-status`, HTTP/2 trailers); a live answer's come with its end
    /// (`LiveResponse.trailers`). An HTTP/1.1 transport sends them only to a client that asked (`TE: trailers`).
    public var trailers = HTTP.Headers()

    public init(_ outcome: Outcome, source: ResponseSource) {
        self.outcome = outcome
        self.source = source
    }

    /// An answer carrying `response` whole.
    public init(response: HTTP.Response, source: ResponseSource) {
        self.init(
            .response(status: response.status, headers: response.headers, body: .bytes(response.body)), source: source)
        trailers = response.trailers
    }

    /// What a declarative route decided: its response or its fault, after its latency.
    init(_ answer: StubAnswer) {
        if let fault = answer.fault {
            self.init(.fault(fault), source: .route)
        } else {
            self.init(response: answer.response ?? HTTP.Response(status: 500), source: .route)
        }
        delay = answer.delay
    }

    /// `{"error": message}` with `status`, from the layer `source` (`.error` for refusals and failures).
    public static func error(_ message: String, status: Int, source: ResponseSource = .error) -> Answer {
        Answer(response: .error(message, status: status), source: source)
    }

    /// The response with its whole body as far as it is known: the bytes, a recorded stream's bytes
    /// joined, or only the head of a live stream; nil for a fault.
    public var response: HTTP.Response? {
        guard case .response(let status, let headers, let body) = outcome else { return nil }
        switch body {
        case .bytes(let bytes): return HTTP.Response(status: status, headers: headers, body: bytes, trailers: trailers)
        case .recorded(let chunks):
            return HTTP.Response(status: status, headers: headers, body: chunks.joinedBytes, trailers: trailers)
        case .live: return HTTP.Response(status: status, headers: headers)
        }
    }

    /// The status the journal keeps: the response's, 101 for a WebSocket, or 0 for a broken connection.
    public var status: Int {
        switch outcome {
        case .response(let status, _, _): return status
        case .webSocket: return 101
        case .fault: return 0
        }
    }
}
