import KakapoEngine
import KakapoHTTP
import NIOCore
import NIOHTTP1

/// Where a request read from the wire is addressed, as the pipeline sees it: the tunnel's origin inside a
/// decrypted `CONNECT` tunnel, the origin of an absolute-form target when Kakapo is a forward proxy, or
/// none (the upstream's). Refuses what must not be forwarded: a target that is neither a path nor an
/// absolute `http://` URL, a request addressed to Kakapo's own listening address, and a path whose
/// dot-segments climb out of the upstream's path prefix. Checks a forward proxy's credentials first
/// (`authorize`).
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

    /// Why the request `head`, read on a connection whose requests go to `origin` (nil outside a tunnel),
    /// is refused for want of the forward proxy's credentials (`ForwardProxyConfiguration.credentials`),
    /// or nil. Proxy requests (an absolute-form target, a `CONNECT`, outside a tunnel) need them; requests
    /// inside a decrypted tunnel were authorised by its `CONNECT`, and origin-form ones are not proxy
    /// requests. With credentials configured, every request loses its `Proxy-Authorization` here, so it
    /// reaches neither the pipeline, the upstream, the cassette nor a log; valid ones naming a session
    /// (`USER+SESSION`) become `X-Kakapo-Session` when sessions are on (not for a WebSocket, which no
    /// session records, nor over a session header the request has already).
    static func authorize(_ head: inout HTTPRequestHead, origin: String?, settings: HTTPConnectionSettings)
        -> String?
    {
        guard let credentials = settings.forward?.credentials else { return nil }
        let values = head.headers["proxy-authorization"]
        let isProxyRequest = origin == nil && !head.uri.hasPrefix("/")
        if values.isEmpty && !isProxyRequest { return nil }
        head.headers.remove(name: "proxy-authorization")
        guard case .accepted(let session) = credentials.verdict(values) else {
            guard isProxyRequest else { return nil }
            let pipeline = settings.pipeline
            pipeline.logger.info(
                "refused \(head.method) \(pipeline.loggable(head.uri)): \(values.isEmpty ? "no" : "wrong") proxy credentials (--proxy-auth)"
            )
            return values.isEmpty
                ? "this proxy needs credentials: Proxy-Authorization: Basic base64(USER:PASSWORD)"
                : "the proxy credentials are not valid"
        }
        if let session, settings.pipeline.sessions != nil, !head.headers.contains(name: "x-kakapo-session"),
            !WebSocketTunnel.isUpgrade(head)
        {
            head.headers.add(name: "X-Kakapo-Session", value: session)
        }
        return nil
    }
}
