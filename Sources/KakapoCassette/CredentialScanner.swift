import KakapoHTTP
import KakapoJSON

/// Finds credentials that slipped into a cassette: values of credential headers, cookies and query
/// parameters that are not the redaction placeholder, and `Bearer` tokens anywhere in headers or text.
public struct CredentialScanner: Sendable {
    /// One credential found, with the JSON path to it in the file.
    public struct Finding: Sendable {
        public let path: [JSONPathComponent]
        public let message: String
    }

    public let redactor: Redactor

    public init(redactor: Redactor = Redactor()) { self.redactor = redactor }

    public func scan(_ cassette: Cassette) -> [Finding] {
        var findings: [Finding] = []
        for (position, interaction) in cassette.interactions.enumerated() {
            let base: [JSONPathComponent] = [.key("interactions"), .index(position)]
            for (side, headers) in [
                ("request", interaction.request.headers), ("response", interaction.response.headers),
            ] {
                for (index, field) in headers.fields.enumerated() {
                    let path = base + [.key(side), .key("headers"), .index(index)]
                    if redactor.isSecretHeader(field.name),
                        redactor.redact(headers: HTTPHeaders([field])).fields[0].value != field.value
                    {
                        findings.append(Finding(path: path, message: "credential in \(side) header \(field.name)"))
                    } else if Self.hasBearerToken(field.value) {
                        findings.append(Finding(path: path, message: "bearer token in \(side) header \(field.name)"))
                    }
                }
            }
            if redactor.redact(target: interaction.request.target) != interaction.request.target {
                findings.append(
                    Finding(path: base + [.key("request"), .key("url")], message: "credential in a query parameter"))
            }
            for (side, body) in [("request", interaction.request.body), ("response", interaction.response.body)] {
                let text = String(decoding: body.prefix(1 << 20), as: UTF8.self)
                if Self.hasBearerToken(text) {
                    findings.append(
                        Finding(path: base + [.key(side), .key("body")], message: "bearer token in the \(side) body"))
                }
            }
        }
        return findings
    }

    static func hasBearerToken(_ text: String) -> Bool {
        var rest = Substring(text)
        while let range = rest.range(of: "Bearer ") {
            let token = rest[range.upperBound...].prefix { !$0.isWhitespace && $0 != "\"" && $0 != "," }
            if token.count >= 8 && token != Redactor.placeholder { return true }
            rest = rest[range.upperBound...]
        }
        return false
    }
}
