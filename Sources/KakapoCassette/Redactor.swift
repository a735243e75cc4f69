import KakapoHTTP

/// Replaces the values of credentials with a placeholder before an interaction is written (design 5.5):
/// credential headers, cookie values (names and attributes stay), and API-key style query parameters.
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
    /// Lowercased query parameter names whose values are redacted.
    public var queryParameters: Set<String>

    public init(
        headers: Set<String> = Redactor.defaultHeaders, queryParameters: Set<String> = Redactor.defaultQueryParameters
    ) {
        self.headers = Set(headers.map { $0.lowercased() })
        self.queryParameters = Set(queryParameters.map { $0.lowercased() })
    }

    /// A redactor that keeps everything (the user asked for credentials in the file).
    public static let disabled = Redactor(headers: [], queryParameters: [])

    /// Adds names to redact and removes names to keep.
    public func adding(headers extraHeaders: [String], queryParameters extraQuery: [String], keeping kept: [String])
        -> Redactor
    {
        var copy = self
        copy.headers.formUnion(extraHeaders.map { $0.lowercased() })
        copy.queryParameters.formUnion(extraQuery.map { $0.lowercased() })
        for name in kept.map({ $0.lowercased() }) {
            copy.headers.remove(name)
            copy.queryParameters.remove(name)
        }
        return copy
    }

    public func isSecretHeader(_ name: String) -> Bool { headers.contains(name.lowercased()) }
    public func isSecretQueryParameter(_ name: String) -> Bool { queryParameters.contains(name.lowercased()) }

    /// The interaction with every secret value replaced.
    public func redact(_ interaction: Interaction) -> Interaction {
        var copy = interaction
        copy.request.headers = redact(headers: interaction.request.headers)
        copy.request.target = redact(target: interaction.request.target)
        copy.response.headers = redact(headers: interaction.response.headers)
        return copy
    }

    public func redact(headers: HTTPHeaders) -> HTTPHeaders {
        var result = HTTPHeaders()
        for field in headers {
            guard isSecretHeader(field.name) else {
                result.add(name: field.name, value: field.value)
                continue
            }
            let lowered = field.name.lowercased()
            if lowered == "cookie" {
                result.add(name: field.name, value: redactCookiePairs(field.value, separator: ";", attributes: false))
            } else if lowered == "set-cookie" {
                result.add(name: field.name, value: redactCookiePairs(field.value, separator: ";", attributes: true))
            } else {
                result.add(name: field.name, value: Redactor.placeholder)
            }
        }
        return result
    }

    /// The target with the values of secret query parameters replaced; the rest is kept as sent.
    public func redact(target: String) -> String {
        guard let mark = target.firstIndex(of: "?") else { return target }
        let query = target[target.index(after: mark)...]
        var changed = false
        let parts = query.split(separator: "&", omittingEmptySubsequences: false).map { part -> String in
            guard let equals = part.firstIndex(of: "="),
                isSecretQueryParameter(String(part[..<equals]).removingPercentEncodingLeniently())
            else { return String(part) }
            changed = true
            return part[..<equals] + "=" + Redactor.placeholder
        }
        return changed ? target[..<mark] + "?" + parts.joined(separator: "&") : target
    }

    /// `a=1; b=2` becomes `a=[REDACTED]; b=[REDACTED]`; for Set-Cookie only the first pair is the cookie,
    /// the rest are attributes (`Path=/`) and stay.
    func redactCookiePairs(_ value: String, separator: Character, attributes: Bool) -> String {
        let pairs = value.split(separator: separator, omittingEmptySubsequences: false)
        return pairs.enumerated().map { offset, pair -> String in
            if attributes && offset > 0 { return String(pair) }
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            return pair[...equals] + Redactor.placeholder
        }.joined(separator: String(separator))
    }
}
