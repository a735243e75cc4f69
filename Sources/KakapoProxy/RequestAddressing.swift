import KakapoEngine
import KakapoHTTP
import NIOCore
import NIOHTTP1

/// Where a request read from the wire is addressed, as the pipeline sees it: the tunnel's origin inside a
/// decrypted `CONNECT` tunnel, the origin of an absolute-form target when Kakapo is a forward proxy, or
/// none (the upstream's). Refuses what must not be forwarded: a target that is neither a path nor an
/// absolute `http://` URL, a request addressed to Kakapo's own listening address, and a path whose
/// dot-segments climb out of the upstream's path prefix.
enum RequestAddressing {
    /// A request to answer, or why not.
    enum Outcome {
        case request(HTTP.Request)
        case refused(String, status: HTTPResponseStatus)
    }

    /// Addresses the request `head` with `body` read on a connection whose requests go to `origin` (nil
    /// outside a tunnel) within cassette session `session`. `listening` says where the connection
    /// reached Kakapo; it is asked only for absolute-form targets.
    static func address(
        _ head: HTTPRequestHead, body: [UInt8], origin: String?, session: String?, settings: HTTPConnectionSettings,
        listening: () -> ListeningAddress
    ) -> Outcome {
        let pipeline = settings.pipeline
        let headers = HTTP.Headers(head.headers.map { HTTP.Headers.Field(name: $0.name, value: $0.value) })
        var request = HTTP.Request(
            method: HTTP.Method(head.method.rawValue), target: head.uri, headers: headers, body: body, origin: origin)
        if let session { request.headers.replaceOrAdd(name: "X-Kakapo-Session", value: session) }
        if origin == nil, settings.forward != nil, !head.uri.hasPrefix("/") {
            // Absolute form, as clients send a forward proxy.
            guard let split = RequestOrigin.split(absoluteURL: head.uri) else {
                return .refused(
                    "a forward proxy needs an absolute http:// URL or a path, not \"\(head.uri)\"", status: .badRequest)
            }
            if let parts = RequestOrigin.parts(of: split.origin), listening().isSelf(host: parts.host, port: parts.port)
            {
                // Forwarded, it would come back from loopback as a request of Kakapo's own.
                pipeline.logger.warning(
                    "refused \(head.method) \(pipeline.loggable(head.uri)): it names Kakapo's own address")
                return .refused(
                    "a request through the proxy may not be addressed to Kakapo itself (\(split.origin))",
                    status: .forbidden)
            }
            (request.origin, request.target) = (split.origin, split.target)
        }
        if request.origin == nil, let base = pipeline.upstream?.url, base.escapesPrefix(request.target) {
            pipeline.logger.warning(
                "refused \(head.method) \(pipeline.loggable(head.uri)): its dot-segments climb out of \(base.description)"
            )
            return .refused(
                "the path \"\(request.path)\" climbs out of the upstream's \"\(base.pathPrefix)\" with dot-segments",
                status: .badRequest)
        }
        return .request(request)
    }
}
