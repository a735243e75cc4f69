import KakapoHTTP

extension ContentCoding {
    /// The recorded `response` as its server would have sent it to `request`, a request that does not
    /// accept the response's content-coding (gzip, deflate, br or zstd) where the `recorded` request did: the body
    /// decoded, no `Content-Encoding`, and a recorded `Content-Length` set to the decoded length. Nil when
    /// the response replays as recorded: it is not in one coding Kakapo decodes, the client accepts that
    /// coding, the recorded request did not ask for it (the server sent it regardless), or the bytes do not
    /// decode.
    public static func identityResponse(
        _ response: HTTP.Response, for request: HTTP.Request, recorded: HTTP.Request
    ) -> HTTP.Response? {
        guard let coding = ContentCoding(header: response.headers["Content-Encoding"]),
            !Representation.accepts(request.headers["Accept-Encoding"], coding.rawValue),
            Representation.accepts(recorded.headers["Accept-Encoding"], coding.rawValue),
            let body = coding.decode(response.body)
        else { return nil }
        var identity = response
        identity.headers.remove(name: "Content-Encoding")
        if identity.headers.contains("Content-Length") {
            identity.headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
        }
        identity.body = body
        return identity
    }
}
