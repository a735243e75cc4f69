import KakapoCassette
import KakapoHTTP

/// The entry points of issue 42: bodies from an upstream, redacted before they are written. Each checks the
/// promise redaction makes, not only that it returns.
enum BodyInputs {
    static let redactor = Redactor()

    /// A response body as `Content-Type`, redacted.
    static func redacted(_ bytes: [UInt8], contentType: String, encoding: String? = nil) -> [UInt8] {
        var headers: HTTP.Headers = ["Content-Type": contentType]
        if let encoding { headers.add(name: "Content-Encoding", value: encoding) }
        let interaction = Interaction(
            request: HTTP.Request(method: .get, target: "/"),
            response: HTTP.Response(status: 200, headers: headers, body: bytes), recordedAt: "",
            durationMilliseconds: 0)
        return redactor.redact(interaction).interaction.response.body
    }

    /// An XML body: redacting what redaction wrote changes nothing more (no secret survives a pass to be
    /// found by the next), and `lint`'s inspection of it returns.
    static func xml(_ bytes: [UInt8]) {
        let once = redacted(bytes, contentType: "application/xml")
        let twice = redacted(once, contentType: "application/xml")
        FileInputs.check(once == twice, "a second XML redaction changed the body again")
        _ = redactor.uninspected(
            in: Interaction(
                request: HTTP.Request(method: .get, target: "/"),
                response: HTTP.Response(status: 200, headers: ["Content-Type": "text/xml"], body: bytes),
                recordedAt: "", durationMilliseconds: 0))
    }

    /// Bytes as a br, zstd, gzip or deflate body (the first byte picks the coding): decoding is bounded, and
    /// what decodes encodes and decodes back to the same content.
    static func coded(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let coding = ContentCoding.allCases[Int(first) % ContentCoding.allCases.count]
        let body = Array(bytes.dropFirst())
        switch coding.decoding(body) {
        case .decoded(let content):
            FileInputs.check(content.count <= ContentCoding.maximumDecodedBytes, "decoded past the limit")
            FileInputs.check(coding.decode(coding.encode(content)) == content, "\(coding) did not round-trip")
        case .invalid, .tooLarge:
            break
        }
    }

    /// A binary body: masked in place, never longer or shorter.
    static func binary(_ bytes: [UInt8]) {
        let masked = redacted(bytes, contentType: "application/octet-stream")
        FileInputs.check(masked.count == bytes.count, "binary redaction changed the length")
    }
}
