import KakapoHTTP
import KakapoJSON

/// Replaces the values of credentials with a placeholder before an interaction is written (design 5.5):
/// credential headers, cookie values (names and attributes stay), API-key style query parameters and
/// form fields, JSON body fields named by pointer, and any of those values echoed elsewhere in the same
/// interaction (a response body that repeats the token, a header that reflects it).
public struct Redactor: Hashable, Sendable {
    /// What replaces a secret value.
    public static let placeholder = "[REDACTED]"

    public static let defaultHeaders: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "x-auth-token",
        "x-access-token", "x-csrf-token", "x-amz-security-token",
    ]
    public static let defaultQueryParameters: Set<String> = [
        "api_key", "apikey", "api-key", "access_token", "token", "key", "password", "secret", "signature",
        "client_secret", "sig",
    ]

    /// Lowercased header names whose values are redacted.
    public var headers: Set<String>
    /// Lowercased query parameter (and form field) names whose values are redacted.
    public var queryParameters: Set<String>
    /// JSON body fields whose values are redacted, in requests and responses.
    public var jsonPointers: [JSONPointer]

    public init(
        headers: Set<String> = Redactor.defaultHeaders, queryParameters: Set<String> = Redactor.defaultQueryParameters,
        jsonPointers: [JSONPointer] = []
    ) {
        self.headers = Set(headers.map { $0.lowercased() })
        self.queryParameters = Set(queryParameters.map { $0.lowercased() })
        self.jsonPointers = jsonPointers
    }

    /// A redactor that keeps everything (the user asked for credentials in the file).
    public static let disabled = Redactor(headers: [], queryParameters: [])

    /// Adds names to redact and removes names to keep.
    public func adding(
        headers extraHeaders: [String], queryParameters extraQuery: [String],
        jsonPointers extraPointers: [JSONPointer] = [],
        keeping kept: [String]
    ) -> Redactor {
        var copy = self
        copy.headers.formUnion(extraHeaders.map { $0.lowercased() })
        copy.queryParameters.formUnion(extraQuery.map { $0.lowercased() })
        copy.jsonPointers += extraPointers
        for name in kept.map({ $0.lowercased() }) {
            copy.headers.remove(name)
            copy.queryParameters.remove(name)
        }
        return copy
    }

    public func isSecretHeader(_ name: String) -> Bool { headers.contains(name.lowercased()) }
    public func isSecretQueryParameter(_ name: String) -> Bool { queryParameters.contains(name.lowercased()) }

    /// The interaction with every secret value replaced, and what was redacted (one name per value:
    /// `Authorization`, `api_key`, `/password`, `echoed secret`).
    public func redact(_ interaction: Interaction) -> (interaction: Interaction, redacted: [String]) {
        var redacted: [String] = []
        var copy = interaction
        let secrets = self.secrets(in: interaction)

        copy.request.headers = redact(headers: interaction.request.headers, noting: &redacted)
        copy.response.headers = redact(headers: interaction.response.headers, noting: &redacted)
        copy.request.target = redact(target: interaction.request.target, noting: &redacted)
        copy.request.body = redact(
            body: interaction.request.body, headers: interaction.request.headers, noting: &redacted)
        copy.response.body = redact(
            body: interaction.response.body, headers: interaction.response.headers, noting: &redacted)

        // Echoes: the same values anywhere else in the interaction.
        if !secrets.isEmpty {
            var echoes = 0
            copy.request.target = String(
                decoding: Self.replace(secrets, in: Array(copy.request.target.utf8), count: &echoes), as: UTF8.self)
            copy.request.headers = replace(secrets, in: copy.request.headers, count: &echoes)
            copy.response.headers = replace(secrets, in: copy.response.headers, count: &echoes)
            copy.request.body = Self.transformContent(copy.request.body, headers: copy.request.headers) {
                Self.replace(secrets, in: $0, count: &echoes)
            }
            copy.response.body = Self.transformContent(copy.response.body, headers: copy.response.headers) {
                Self.replace(secrets, in: $0, count: &echoes)
            }
            if let chunks = copy.chunks {
                copy.chunks = chunks.map { chunk in
                    ResponseChunk(
                        offsetMilliseconds: chunk.offsetMilliseconds,
                        bytes: Self.replace(secrets, in: chunk.bytes, count: &echoes))
                }
                copy.response.body = copy.chunks?.joinedBytes ?? []
            }
            redacted += Array(repeating: "echoed secret", count: echoes)
        }
        return (copy, redacted)
    }

    /// Header values redacted by name.
    public func redact(headers: HTTPHeaders) -> HTTPHeaders {
        var ignored: [String] = []
        return redact(headers: headers, noting: &ignored)
    }

    /// The request's URL as reports and the journal show it: its origin, when it names one, then the
    /// target with the values of secret query parameters replaced.
    public func redactedURL(of request: HTTPRequest) -> String {
        let target = redact(target: request.target)
        guard let origin = request.origin else { return target }
        return origin + target
    }

    /// The target with the values of secret query parameters replaced; the rest is kept as sent.
    public func redact(target: String) -> String {
        var ignored: [String] = []
        return redact(target: target, noting: &ignored)
    }

    private func redact(headers: HTTPHeaders, noting redacted: inout [String]) -> HTTPHeaders {
        var result = HTTPHeaders()
        for field in headers {
            guard isSecretHeader(field.name), field.value != Redactor.placeholder else {
                result.add(name: field.name, value: field.value)
                continue
            }
            let lowered = field.name.lowercased()
            let value: String
            if lowered == "cookie" {
                value = Self.redactPairs(field.value, keepAttributes: false)
            } else if lowered == "set-cookie" {
                value = Self.redactPairs(field.value, keepAttributes: true)
            } else {
                value = Redactor.placeholder
            }
            if value != field.value { redacted.append(field.name) }
            result.add(name: field.name, value: value)
        }
        return result
    }

    private func redact(target: String, noting redacted: inout [String]) -> String {
        guard let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return target }
        let query = String(target[target.utf8.index(after: mark)...])
        let rewritten = redact(pairs: query, noting: &redacted)
        return rewritten == query ? target : target[..<mark] + "?" + rewritten
    }

    /// `a=1&api_key=x` with secret values replaced (query strings and form bodies).
    private func redact(pairs: String, noting redacted: inout [String]) -> String {
        var changed = false
        let parts = pairs.split(separator: "&", omittingEmptySubsequences: false).map { part -> String in
            guard let equals = part.firstIndex(of: "=") else { return String(part) }
            let name = String(part[..<equals]).removingPercentEncodingLeniently()
            guard isSecretQueryParameter(name), part[part.index(after: equals)...] != Redactor.placeholder else {
                return String(part)
            }
            changed = true
            redacted.append(name)
            return part[..<equals] + "=" + Redactor.placeholder
        }
        return changed ? parts.joined(separator: "&") : pairs
    }

    private func redact(body: [UInt8], headers: HTTPHeaders, noting redacted: inout [String]) -> [UInt8] {
        guard !body.isEmpty else { return body }
        let contentType = headers["Content-Type"]?.lowercased() ?? ""
        let formBody = contentType.hasPrefix("application/x-www-form-urlencoded")
        guard formBody || !jsonPointers.isEmpty else { return body }
        return Self.transformContent(body, headers: headers) { content in
            if formBody {
                let text = String(decoding: content, as: UTF8.self)
                return Array(redact(pairs: text, noting: &redacted).utf8)
            }
            guard let value = try? JSONParser.parse(content), let layout = JSONLayout.detect(content, value: value)
            else {
                return content
            }
            var rewritten = value
            for pointer in jsonPointers {
                guard let found = rewritten[pointer: pointer], found != .string(Redactor.placeholder) else { continue }
                rewritten = rewritten.replacing(pointer, with: .string(Redactor.placeholder))
                redacted.append(pointer.description)
            }
            return rewritten == value ? content : layout.write(rewritten)
        }
    }

    /// The secret values an interaction carries, longest first, that are long enough to be found safely.
    func secrets(in interaction: Interaction) -> [[UInt8]] {
        var values: Set<String> = []
        for field in interaction.request.headers where isSecretHeader(field.name) {
            let lowered = field.name.lowercased()
            if lowered == "cookie" {
                values.formUnion(Self.pairValues(field.value, keepAttributes: false))
            } else {
                values.insert(field.value)
                // `Bearer abc`: the credential alone may be echoed too.
                if let space = field.value.firstIndex(of: " ") {
                    values.insert(field.value[field.value.index(after: space)...].trimmingSpaces())
                }
            }
        }
        for field in interaction.response.headers
        where field.name.lowercased() == "set-cookie" && isSecretHeader(field.name) {
            values.formUnion(Self.pairValues(field.value, keepAttributes: true))
        }
        for item in interaction.request.queryItems
        where isSecretQueryParameter(item.name.removingPercentEncodingLeniently()) {
            if let value = item.value {
                values.insert(value)
                values.insert(value.removingPercentEncodingLeniently())
            }
        }
        if !jsonPointers.isEmpty, let json = try? JSONParser.parse(interaction.request.body) {
            for pointer in jsonPointers {
                if let value = json[pointer: pointer]?.stringValue { values.insert(value) }
            }
        }
        values.remove(Redactor.placeholder)
        return values.filter { $0.utf8.count >= 4 }.sorted { $0.utf8.count > $1.utf8.count }.map { Array($0.utf8) }
    }

    private func replace(_ secrets: [[UInt8]], in headers: HTTPHeaders, count: inout Int) -> HTTPHeaders {
        var result = HTTPHeaders()
        for field in headers {
            result.add(
                name: field.name,
                value: String(
                    decoding: Self.replace(secrets, in: Array(field.value.utf8), count: &count), as: UTF8.self))
        }
        return result
    }

    /// Every occurrence of each secret replaced by the placeholder.
    static func replace(_ secrets: [[UInt8]], in bytes: [UInt8], count: inout Int) -> [UInt8] {
        var current = bytes
        let placeholder = Array(Redactor.placeholder.utf8)
        for secret in secrets where current.count >= secret.count {
            var output: [UInt8] = []
            var index = 0
            var found = false
            while index < current.count {
                if current[index] == secret[0], index + secret.count <= current.count,
                    current[index..<(index + secret.count)].elementsEqual(secret)
                {
                    output.append(contentsOf: placeholder)
                    index += secret.count
                    count += 1
                    found = true
                } else {
                    output.append(current[index])
                    index += 1
                }
            }
            if found { current = output }
        }
        return current
    }

    /// Applies `transform` to a body's content: decoded first when it is gzip or deflate, encoded again
    /// afterwards (only if something changed).
    static func transformContent(_ body: [UInt8], headers: HTTPHeaders, _ transform: ([UInt8]) -> [UInt8]) -> [UInt8] {
        guard !body.isEmpty else { return body }
        if let coding = ContentCoding(header: headers["Content-Encoding"]) {
            guard let decoded = coding.decode(body) else { return body }
            let changed = transform(decoded)
            return changed == decoded ? body : coding.encode(changed)
        }
        return transform(body)
    }

    /// `a=1; b=2` becomes `a=[REDACTED]; b=[REDACTED]`; for Set-Cookie only the first pair is the cookie,
    /// the rest are attributes (`Path=/`) and stay.
    static func redactPairs(_ value: String, keepAttributes: Bool) -> String {
        value.split(separator: ";", omittingEmptySubsequences: false).enumerated().map { offset, pair -> String in
            if keepAttributes && offset > 0 { return String(pair) }
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            return pair[...equals] + Redactor.placeholder
        }.joined(separator: ";")
    }

    static func pairValues(_ value: String, keepAttributes: Bool) -> [String] {
        value.split(separator: ";").enumerated().compactMap { offset, pair in
            if keepAttributes && offset > 0 { return nil }
            guard let equals = pair.firstIndex(of: "=") else { return nil }
            return String(pair[pair.index(after: equals)...])
        }
    }
}
