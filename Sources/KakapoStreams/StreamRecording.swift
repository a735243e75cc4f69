import KakapoCassette
import KakapoGRPC
import KakapoHTTP

/// How a streamed upstream answer is recorded: as one body, or as timed chunks that replay with the
/// gaps they arrived with.
package enum StreamRecording: Sendable, Equatable {
    /// As one body: an answer of announced length (a download), or one not recorded at all.
    case whole
    /// One chunk per server-sent event (`text/event-stream`).
    case events
    /// One chunk per line: newline-delimited JSON (`application/x-ndjson`, `application/jsonl`,
    /// `application/json-seq` and the like).
    case lines
    /// One chunk per gRPC message (`application/grpc`): each length-prefixed frame with the time it came,
    /// however close together they were.
    case messages
    /// Another answer of unknown length (chunked, or ended by closing): as the pieces arrived when it
    /// paused on the way (a gap of at least `pauseMilliseconds`), as one body when it came at once.
    case pieces

    /// The gap between two arrivals that makes an answer of unknown length a stream; arrivals closer
    /// together than this are one piece.
    package static let pauseMilliseconds = 100.0

    /// How the answer with `headers` is recorded; `.whole` when nothing is recorded (`recording` false),
    /// so an endless stream in passthrough keeps nothing.
    package static func of(_ headers: HTTP.Headers, recording: Bool) -> StreamRecording {
        guard recording else { return .whole }
        if headers.announcesEventStream { return .events }
        if GRPC.isGRPC(contentType: headers["Content-Type"]) { return .messages }
        if headers["Content-Length"] != nil { return .whole }
        if let type = headers["Content-Type"]?.lowercased(), lineTypes.contains(where: type.hasPrefix) {
            return .lines
        }
        return .pieces
    }

    private static let lineTypes = [
        "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines",
        "application/jsonlines", "application/json-seq", "application/stream+json",
    ]

    /// Takes the complete units (events or lines) off the front of `pending`, leaving a partial one
    /// there; nil for the kinds that are not cut by content.
    package func takeUnits(from pending: inout [UInt8]) -> [[UInt8]]? {
        switch self {
        case .events: ResponseChunk.takeEvents(from: &pending)
        case .lines: ResponseChunk.takeLines(from: &pending)
        case .messages: GRPC.takeFrames(from: &pending)
        case .whole, .pieces: nil
        }
    }
}
