import KakapoEngine
import KakapoGRPC
import NIOCore
import NIOHTTP1
import Synchronization

/// gRPC calls whose client keeps its request open while it waits for answers: a bidirectional call such as
/// etcd's Watch. Kakapo reads a request whole before it forwards or answers it, so such a call would wait
/// with nothing said until the request deadline closed it; it is answered UNIMPLEMENTED at once instead, with
/// a `grpc-message` naming the limitation, journaled, and logged at warning level once per method.
///
/// How a call is known: with `--proto-descriptor` a method the descriptor set declares bidirectional is
/// refused on its headers. Otherwise (no descriptor set, or a method it does not have) a gRPC request over
/// HTTP/2 whose body has not ended `quietLimit` after its last byte, where a message ends, is taken for one
/// that waits: a unary or server-streaming client sends its one message and ends its request at once, and a
/// client-streaming call that ends its request promptly is one body of several messages, as before. A method
/// the descriptor set declares unary, server-streaming or client-streaming is never refused.
final class OpenGRPCCalls: Sendable {
    /// What is done with a request head.
    enum Verdict {
        /// Not a call that could wait for answers: read as any request.
        case none
        /// Answered UNIMPLEMENTED now, with this `grpc-message`.
        case refuse(String)
        /// Watched: refused if its request stays open, where a message ends, for `quietLimit`.
        case watch
    }

    /// A request watched for being left open: its head, and its messages so far.
    struct Watch {
        let head: HTTPRequestHead
        var frames = GRPCFrameBoundary()
        /// When the last piece of its body came (or its head).
        var lastRead = NIODeadline.now()
    }

    /// How long a gRPC request may stay open after its last byte before it is taken for one that waits.
    let quietLimit: TimeAmount
    /// Methods already said in the log (at most `largestLoggedMethods`).
    private let logged = Mutex<Set<String>>([])
    /// The most methods remembered as said; past it refusals are journaled but not logged.
    static let largestLoggedMethods = 64

    init(quietLimit: TimeAmount = .seconds(1)) {
        self.quietLimit = quietLimit
    }

    /// What to do with `head`, read by a connection of `pipeline`. Only HTTP/2 requests (gRPC needs HTTP/2)
    /// with a gRPC `content-type` are looked at, so other requests cost one comparison.
    func verdict(for head: HTTPRequestHead, pipeline: RequestPipeline) -> Verdict {
        guard head.version.major >= 2, GRPC.isGRPC(contentType: head.headers.first(name: "content-type")) else {
            return .none
        }
        guard let schema = pipeline.configuration.matching.grpcSchema,
            let streaming = schema.streaming(path: head.uri)
        else { return .watch }
        guard streaming.client && streaming.server else { return .none }
        let file = schema.file.split(separator: "/").last.map(String.init) ?? schema.file
        return .refuse(
            Self.message(
                "bidirectional gRPC calls are not recorded or replayed yet",
                detail: "\(head.method.rawValue) \(pipeline.loggable(head.uri)) is bidirectional in \(file)"))
    }

    /// The `grpc-message` of a watched call refused after `messages` messages and the quiet limit.
    func quietMessage(for head: HTTPRequestHead, messages: Int, pipeline: RequestPipeline) -> String {
        let seconds = Double(quietLimit.nanoseconds) / 1e9
        let sent = messages == 1 ? "1 message" : "\(messages) messages"
        return Self.message(
            "client-streaming and bidirectional gRPC calls that keep their request open are not recorded or replayed yet",
            detail:
                "\(head.method.rawValue) \(pipeline.loggable(head.uri)) sent \(sent), then nothing for \(seconds.formatted()) s without ending its request"
        )
    }

    private static func message(_ limitation: String, detail: String) -> String {
        "kakapo: \(limitation) (\(detail)); see docs/grpc.md"
    }

    /// Logs a refusal at warning level, once per method.
    func log(_ message: String, for head: HTTPRequestHead, pipeline: RequestPipeline) {
        let method = pipeline.loggable(head.uri)
        let first = logged.withLock { logged -> Bool in
            guard logged.count < Self.largestLoggedMethods, !logged.contains(method) else { return false }
            logged.insert(method)
            return true
        }
        guard first else { return }
        let text = message.hasPrefix("kakapo: ") ? String(message.dropFirst(8)) : message
        pipeline.logger.warning("answered UNIMPLEMENTED: \(text) (said once per method; every call is journaled)")
    }
}

extension Double {
    /// The number as a person writes it: `1`, `0.5`, `2.25`.
    fileprivate func formatted() -> String {
        self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}
