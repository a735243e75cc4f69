import NIOCore
import NIOHTTP1

/// What a connection's request in flight is doing, as `SlowRequestWatch` reads it: kept by the connection's
/// `HTTPServerHandler` on its event loop and changed by a few stores per request (no clock reading, no lock).
/// The watch's sweep notices a request whose `events` have not moved for the limit.
struct WatchedRequest {
    /// Where the request is.
    enum Phase {
        /// No request in flight (between requests, or the connection carries a tunnel or a WebSocket).
        case idle
        /// Its head has come; its body is arriving.
        case body
        /// Read whole; its answer has not started.
        case answer
        /// A whole answer is being written.
        case writing
        /// A streamed answer is being written: live from the upstream, or a recording played with its gaps.
        case stream(live: Bool)
    }

    var phase = Phase.idle
    /// The request's method and target, for the line.
    var method = HTTPMethod.GET
    var target = ""
    /// Body bytes read so far.
    var bodyBytes = 0
    /// Moves whenever something happens to the request (a piece of its body, its answer starting).
    var events = 0
    /// Which request of the connection this is: an answer's end that comes after the next request began
    /// leaves the next one alone.
    var generation = 0

    // Kept by the sweep alone.
    /// `events` (with the bytes sent) when the sweep last looked.
    var seen = -1
    /// When the sweep first saw `seen`.
    var quietSince = NIODeadline.uptimeNanoseconds(0)
    /// Whether this request has been said to be slow (once per request).
    var warned = false

    /// A request's head has come.
    mutating func begin(_ head: HTTPRequestHead) {
        phase = .body
        method = head.method
        target = head.uri
        bodyBytes = 0
        events &+= 1
        generation &+= 1
        warned = false
    }

    /// Moves to `phase`, which counts as something happening.
    mutating func move(to phase: Phase) {
        self.phase = phase
        events &+= 1
    }

    /// The request of `generation` is over, unless another has begun since.
    mutating func end(_ generation: Int) {
        if self.generation == generation { phase = .idle }
    }

    /// Whether the sweep at `now` finds it quiet for `limit` (and not yet said): `progress` is `events` with
    /// anything else that moves while the request does (the bytes its answer sent).
    mutating func isNewlySlow(progress: Int, now: NIODeadline, limit: TimeAmount) -> Bool {
        if case .idle = phase { return false }
        if progress != seen {
            seen = progress
            quietSince = now
            return false
        }
        guard !warned, now - quietSince >= limit else { return false }
        warned = true
        return true
    }
}
