import KakapoGRPC
import KakapoHTTP
import KakapoJSON

/// Bodies: form fields, JSON members and text searched by the shape of values, each decoded first when
/// its content coding allows, and encoded again when something changed.
extension Redactor {
    func redact(body: [UInt8], headers: HTTP.Headers, side: Side, noting redacted: inout [String]) -> [UInt8] {
        guard !body.isEmpty else { return body }
        let contentType = headers["Content-Type"]?.lowercased() ?? ""
        if contentType.hasPrefix("application/x-www-form-urlencoded") {
            return Self.transformContent(body, headers: headers) { content in
                let text = String(decoding: content, as: UTF8.self)
                return Array(redact(pairs: text, noting: &redacted).utf8)
            }
        }
        if contentType.hasPrefix("multipart/") {
            return Self.transformContent(body, headers: headers) { content in
                var ignored: Set<String> = []
                return redactMultipart(
                    content, contentType: headers["Content-Type"] ?? "", side: side, secrets: &ignored,
                    noting: &redacted) ?? content
            }
        }
        guard Self.isText(contentType) else {
            // Binary: credential shapes in its printable runs, masked at their own length.
            guard byShape, !GRPC.isGRPC(contentType: contentType) else { return body }
            return Self.transformContent(body, headers: headers) { maskBinary($0, noting: &redacted) ?? $0 }
        }
        guard byShape || readsEveryBody else { return body }
        return Self.transformContent(body, headers: headers) { content in
            guard readsEveryBody || CredentialValues.mightHoldCredential(content) else {
                return content
            }
            if Self.isXML(contentType: contentType, content) {
                var ignored: Set<String> = []
                switch redactXML(content, side: side, secrets: &ignored, noting: &redacted) {
                case .changed(let clean): return clean
                case .unchanged: return content
                case .notInspected:
                    return byShape ? CredentialValues.redacting(content, noting: &redacted) ?? content : content
                }
            }
            guard JSONParser.looksLikeContainer(content), let value = try? JSONParser.parse(content) else {
                return byShape ? CredentialValues.redacting(content, noting: &redacted) ?? content : content
            }
            guard let rewritten = redact(jsonValue: value, side: side, noting: &redacted) else { return content }
            return (JSONLayout.detect(content, value: value) ?? .compact).write(rewritten)
        }
    }

    /// A JSON body's value with the `--redact-json` pointers and the secret members (by name and by shape, or
    /// all but the allowed ones) replaced; nil when nothing in it is secret.
    func redact(jsonValue value: JSONValue, side: Side, noting redacted: inout [String]) -> JSONValue? {
        var rewritten = value
        var changed = false
        for pointer in jsonPointers {
            guard let found = rewritten[pointer: pointer], found != .string(Redactor.placeholder) else { continue }
            rewritten = rewritten.replacing(pointer, with: .string(Redactor.placeholder))
            redacted.append(pointer.description)
            changed = true
        }
        if byShape || allowlist != nil || !names.isEmpty,
            let replaced = redact(json: rewritten, name: nil, side: side, noting: &redacted)
        {
            rewritten = replaced
            changed = true
        }
        // Not a ternary: JSONValue takes a nil literal (as null), which would make `nil` a value here.
        guard changed else { return nil }
        return rewritten
    }

    /// A stream's chunk, or any text: secrets by their shape.
    func redactText(_ bytes: [UInt8], headers: HTTP.Headers, noting redacted: inout [String]) -> [UInt8] {
        guard byShape, !bytes.isEmpty, Self.isText(headers["Content-Type"]?.lowercased() ?? "") else { return bytes }
        return CredentialValues.redacting(bytes, noting: &redacted) ?? bytes
    }

    /// JSON with the values of secret members replaced, at any depth, or nil when nothing in it is
    /// secret; `name` is the member the value belongs to (array elements belong to the array's member), and
    /// `inside` says it is within a member that holds credentials (`{"auth": {"bearer": ...}}`), where every
    /// string is secret but those that describe the credential or its owner.
    private func redact(
        json: JSONValue, name: String?, side: Side, inside: Bool = false, noting redacted: inout [String]
    ) -> JSONValue? {
        switch json {
        case .object, .array:
            return json.replacingChildren { key, child in
                // An element belongs to its array's member; within a member that holds credentials, all is.
                guard let key else {
                    return redact(json: child, name: name, side: side, inside: inside, noting: &redacted)
                }
                return redact(
                    json: child, name: key, side: side, inside: inside || holdsCredentials(key), noting: &redacted)
            }
        case .string(let text):
            guard !text.isEmpty, !Redactor.isPlaceholder(text) else { return nil }
            if let name {
                if isSecretField(name) {
                    redacted.append(name)
                    return .string(Redactor.placeholder)
                }
                if isKept(name) { return nil }
                if inside && !CredentialNames.describesCredential(name) {
                    redacted.append(name)
                    return .string(Redactor.placeholder)
                }
            }
            guard byShape, CredentialValues.mightHoldCredential(text) else { return nil }
            var kinds: [String] = []
            let rewritten = CredentialValues.redacting(text, noting: &kinds)
            guard rewritten != text else { return nil }
            redacted += kinds
            return .string(side == .request ? Redactor.placeholder : rewritten)
        case .number, .bool:
            guard let name, isSecretField(name) else { return nil }
            if case .bool = json, allowlist == nil { return nil }
            redacted.append(name)
            return .string(Redactor.placeholder)
        case .null:
            return nil
        }
    }

    /// Whether a body of this content type is text that secrets can be found in (no content type: maybe).
    static func isText(_ contentType: String) -> Bool {
        if contentType.isEmpty || contentType.hasPrefix("text/") || contentType.hasPrefix("application/json") {
            return true
        }
        // Byte searches: String.contains(String) goes through Foundation, several times slower.
        let bytes = contentType.utf8
        return Self.textMarkers.contains { bytes.firstRange(of: $0) != nil }
    }

    /// What in a media type says its content is text (`application/vnd.api+json`, `image/svg+xml`, ...).
    private static let textMarkers: [[UInt8]] = [
        "json", "xml", "javascript", "yaml", "graphql", "x-www-form-urlencoded",
    ]
    .map { Array($0.utf8) }

    /// Applies `transform` to a body's content: decoded first when it is gzip or deflate, encoded again
    /// afterwards (only if something changed).
    static func transformContent(_ body: [UInt8], headers: HTTP.Headers, _ transform: ([UInt8]) -> [UInt8]) -> [UInt8] {
        guard !body.isEmpty else { return body }
        if let coding = ContentCoding(header: headers["Content-Encoding"]) {
            guard let decoded = coding.decode(body) else { return body }
            let changed = transform(decoded)
            return changed == decoded ? body : coding.encode(changed)
        }
        return transform(body)
    }
}
