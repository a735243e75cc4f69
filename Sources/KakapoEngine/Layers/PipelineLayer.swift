import KakapoCassette
import KakapoHTTP

/// One layer of the pipeline (design section 2): given a request, it answers now, answers later (off the
/// caller's thread: a route handler, the Store, the upstream), or passes it on to the next layer.
protocol PipelineLayer: Sendable {
    static func step(_ exchange: inout Exchange, in pipeline: RequestPipeline) -> LayerStep
}

/// What a layer does with a request.
enum LayerStep: Sendable {
    /// Answered, on the caller's thread.
    case now(Answer)
    /// Answered later: the closure starts the work and calls its argument once, on any thread.
    case later(@Sendable (_ reply: @escaping @Sendable (Answer) -> Void) -> Void)
    /// Not this layer's: the next one is asked.
    case pass

    /// Delivers the answer to `reply`: at once for `.now`, once its work is done for `.later`. False for
    /// `.pass`, which has none.
    func start(_ reply: @escaping @Sendable (Answer) -> Void) -> Bool {
        switch self {
        case .now(let answer): reply(answer)
        case .later(let start): start(reply)
        case .pass: return false
        }
        return true
    }
}

/// A request on its way through the layers, with what earlier layers decided about it.
struct Exchange: Sendable {
    var request: HTTP.Request
    /// Whether the client is on this machine (the admin API answers only such clients without a token).
    let fromLoopback: Bool
    /// The cassette session the request names, if any (its cassette, mode and Store replace the server's).
    var testSession: TestSession?
    /// The mode the request is answered in: the server's, or its session's.
    var mode: ProxyMode
    /// The cassette the request is answered from and recorded into, if any.
    var cassette: CassetteSession?
}
