import KakapoHTTP
import KakapoJSON

/// Finds credentials that slipped into a cassette, by the redactor's own rules: whatever `Redactor`
/// would change (a credential header, query parameter, form or JSON field, a JWT or bearer token
/// anywhere) is a finding, so `lint`, `redact` and recording never disagree.
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
            let (clean, names) = redactor.redact(interaction)
            guard !names.isEmpty else { continue }
            for (side, headers, redacted) in [
                ("request", interaction.request.headers, clean.request.headers),
                ("response", interaction.response.headers, clean.response.headers),
            ] {
                for (index, (field, after)) in zip(headers.fields, redacted.fields).enumerated()
                where field.value != after.value {
                    let path = base + [.key(side), .key("headers"), .index(index)]
                    let what =
                        !redactor.isSecretHeader(field.name) && Self.hasBearerToken(field.value)
                        ? "bearer token" : "credential"
                    findings.append(Finding(path: path, message: "\(what) in \(side) header \(field.name)"))
                }
            }
            if clean.request.target != interaction.request.target {
                findings.append(
                    Finding(path: base + [.key("request"), .key("url")], message: "credential in a query parameter"))
            }
            for (side, body, redacted) in [
                ("request", interaction.request.body, clean.request.body),
                ("response", interaction.response.body, clean.response.body),
            ] where body != redacted {
                let what = Self.hasBearerToken(String(decoding: body.prefix(1 << 20), as: UTF8.self))
                var message = what ? "bearer token in the \(side) body" : "credential in the \(side) body"
                var path = base + [.key(side), .key("body")]
                if let (member, components) = Self.firstRedactedMember(body, redacted) {
                    message += " at \(member)"
                    path += [.key("json")] + components
                }
                findings.append(Finding(path: path, message: message))
            }
            if let before = interaction.webSocket, let after = clean.webSocket {
                findings += Self.findings(in: before, redacted: after, interaction: position, at: base)
            }
        }
        return findings
    }

    /// The first JSON member redaction changed, as a pointer and as the path to it in the file (where a
    /// JSON body is stored under `json`); nil for bodies that are not JSON.
    static func firstRedactedMember(_ body: [UInt8], _ redacted: [UInt8]) -> (JSONPointer, [JSONPathComponent])? {
        guard JSONParser.looksLikeContainer(body), let before = try? JSONParser.parse(body),
            let after = try? JSONParser.parse(redacted), let pointer = before.differences(from: after, limit: 1).first
        else { return nil }
        var components: [JSONPathComponent] = []
        var value = before
        for component in pointer.components {
            if case .array(let elements) = value, let index = Int(component), elements.indices.contains(index) {
                components.append(.index(index))
                value = elements[index]
            } else {
                components.append(.key(component))
                value = value.objectValue?[component] ?? .null
            }
        }
        return (pointer, components)
    }

    /// The bodies redaction could not read (`Redactor.uninspected`), each with the path to it in the file.
    public func uninspected(_ cassette: Cassette) -> [Finding] {
        var findings: [Finding] = []
        for (position, interaction) in cassette.interactions.enumerated() {
            for item in redactor.uninspected(in: interaction) {
                findings.append(
                    Finding(
                        path: [.key("interactions"), .index(position), .key(item.side), .key("body")],
                        message: "the \(item.side) body was not inspected: \(item.reason)"))
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
