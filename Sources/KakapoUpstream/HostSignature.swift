import KakapoHTTP

/// A signature a request carries over its `Host` header, which a reverse proxy that rewrites `Host` breaks:
/// AWS Signature Version 4 (`Authorization: AWS4-HMAC-SHA256 ...`, or a presigned URL's `X-Amz-Signature`)
/// and Google Cloud Storage's V4 signing (`GOOG4-...`, `X-Goog-Signature`). Both always sign `host`.
public enum HostSignature: String, Sendable {
    case awsSigV4 = "an AWS SigV4 signature"
    case googleV4 = "a Google Cloud Storage V4 signature"

    /// The signature `request` carries, if any: its `Authorization` scheme first, then its query's
    /// parameter names (the first 64; a hostile query costs no more).
    public init?(of request: HTTP.Request) {
        if let authorization = request.headers["Authorization"] {
            let scheme = authorization.prefix(while: { $0 != " " }).uppercased()
            if scheme.hasPrefix("AWS4-") {
                self = .awsSigV4
                return
            }
            if scheme.hasPrefix("GOOG4-") {
                self = .googleV4
                return
            }
        }
        guard let question = request.target.firstIndex(of: "?") else { return nil }
        let query = request.target[request.target.index(after: question)...]
        for parameter in query.split(separator: "&").prefix(64) {
            let name = parameter.prefix(while: { $0 != "=" }).lowercased()
            if name == "x-amz-signature" {
                self = .awsSigV4
                return
            }
            if name == "x-goog-signature" {
                self = .googleV4
                return
            }
        }
        return nil
    }

    /// What Kakapo says, once a run, about a `request` signed over a `Host` that is not the `upstreamHost`
    /// it sends instead: the method and path (never the query, which may hold the signature), both hosts,
    /// and the two ways out. Nil when the request carries no such signature or its `Host` is the upstream's.
    public static func warning(for request: HTTP.Request, upstreamHost: String) -> String? {
        guard let host = request.headers["Host"], !host.caseInsensitiveEquals(upstreamHost),
            let signature = HostSignature(of: request)
        else { return nil }
        let path = request.target.prefix(while: { $0 != "?" }).prefix(200)
        return "\(request.method) \(path) carries \(signature.rawValue) over Host \"\(host.prefix(200))\", "
            + "but Kakapo sends Host \"\(upstreamHost)\" upstream, so the upstream will reject the signature; "
            + "use --preserve-host (the client signs for Kakapo's address) or --proxy (forward-proxy mode keeps "
            + "the client's Host)"
    }
}
