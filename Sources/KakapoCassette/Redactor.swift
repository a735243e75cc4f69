import KakapoGRPC
import KakapoHTTP
import KakapoJSON

/// Replaces the values of credentials with a placeholder before an interaction is written (design 5.5,
/// issue 25), and before a request reaches the journal or a log:
/// - by the shape of names (`CredentialNames`): headers, query parameters, form fields and JSON members
///   at any depth, of requests and responses; cookie values (names and attributes stay);
/// - by the shape of values (`CredentialValues`): JWTs, AWS key ids, bearer and basic credentials,
///   credential parameters of URLs, wherever they appear in headers, query values and text bodies;
/// - the names and JSON pointers the user adds, less the names the user keeps (`--no-redact`);
/// - every value a request carried as a secret, echoed anywhere else in the interaction (a response
///   body that repeats the password of a form, a header that reflects the token);
/// - every message of a WebSocket conversation, as a body (`Redactor+WebSocket.swift`);
/// - every message of a gRPC call, by its fields' names with a descriptor set, by its values' shapes
///   without one (`Redactor+GRPC.swift`).
///
/// In allowlist mode (`--redact-all-except`) every header, query parameter, form field and JSON member
/// not listed is redacted, except the headers that frame a message (`Content-Type`, `Content-Length`,
/// `Content-Encoding`, `Transfer-Encoding`, `Host`), without which nothing replays.
///
/// A redacted request value that is a whole field (a query value, a form field, a JSON string) becomes
/// the placeholder itself, so matching ignores it on replay; inside response text only the secret is
/// replaced (`Bearer [REDACTED]`, a URL keeps its path).
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
    /// Whether names and values are also recognized by their shape (on by default).
    public var byShape: Bool
    /// Lowercased names redacted wherever they appear: headers, query parameters, form fields, JSON members
    /// at any depth, XML elements and attributes (`--redact NAME`, for a value the rules leave in clear,
    /// such as a correlation id).
    public var names: Set<String>
    /// Lowercased names (headers, query parameters, form and JSON fields) written as they are.
    public var kept: Set<String>
    /// Lowercased names that are the only ones kept, in allowlist mode; nil otherwise.
    public var allowlist: Set<String>?

    /// Headers kept in allowlist mode: a message cannot be read or replayed without them.
    public static let framingHeaders: Set<String> = [
        "content-type", "content-length", "content-encoding", "transfer-encoding", "host",
    ]

    public init(
        headers: Set<String> = Redactor.defaultHeaders, queryParameters: Set<String> = Redactor.defaultQueryParameters,
        jsonPointers: [JSONPointer] = []
    ) {
        self.headers = Set(headers.map { $0.lowercased() })
        self.queryParameters = Set(queryParameters.map { $0.lowercased() })
        self.jsonPointers = jsonPointers
        self.byShape = true
        self.names = []
        self.kept = []
        self.allowlist = nil
    }

    /// A redactor that keeps everything (the user asked for credentials in the file).
    public static let disabled: Redactor = {
        var redactor = Redactor(headers: [], queryParameters: [])
        redactor.byShape = false
        return redactor
    }()

    /// Adds names to redact and removes names to keep.
    public func adding(
        headers extraHeaders: [String], queryParameters extraQuery: [String],
        jsonPointers extraPointers: [JSONPointer] = [], names extraNames: [String] = [],
        keeping kept: [String]
    ) -> Redactor {
        var copy = self
        copy.names.formUnion(extraNames.map { $0.lowercased() })
        copy.headers.formUnion(extraHeaders.map { $0.lowercased() })
        copy.queryParameters.formUnion(extraQuery.map { $0.lowercased() })
        copy.jsonPointers += extraPointers
        for name in kept.map({ $0.lowercased() }) {
            copy.headers.remove(name)
            copy.queryParameters.remove(name)
            copy.kept.insert(name)
        }
        return copy
    }

    /// Allowlist mode: every header, query parameter, form and JSON field not in `names` is redacted
    /// (names compared without regard to case), the framing headers aside.
    public func allowingOnly(_ names: [String]) -> Redactor {
        var copy = self
        copy.allowlist = Set(names.map { $0.lowercased() })
        return copy
    }

    public func isSecretHeader(_ name: String) -> Bool {
        let lowered = name.lowercased()
        if kept.contains(lowered) { return false }
        if let allowlist { return !allowlist.contains(lowered) && !Self.framingHeaders.contains(lowered) }
        return headers.contains(lowered) || (names.contains(lowered) && !Self.framingHeaders.contains(lowered))
            || (byShape && CredentialNames.isCredential(name, in: .header))
    }

    /// Whether a query parameter's (or form field's) value is a secret, by its name.
    public func isSecretQueryParameter(_ name: String) -> Bool {
        let lowered = name.lowercased()
        if kept.contains(lowered) { return false }
        if let allowlist { return !allowlist.contains(lowered) }
        return queryParameters.contains(lowered) || names.contains(lowered)
            || (byShape && CredentialNames.isCredential(name, in: .query))
    }

    /// Whether a JSON member's value is a secret, by the member's name.
    public func isSecretField(_ name: String) -> Bool {
        let lowered = name.lowercased()
        if kept.contains(lowered) { return false }
        if let allowlist { return !allowlist.contains(lowered) }
        return names.contains(lowered) || (byShape && CredentialNames.isCredential(name, in: .json))
    }

    /// Whether every text body is read for named values, whether or not it holds anything shaped like a
    /// credential: the user named what to redact (`--redact`, `--redact-json`, the allowlist).
    var readsEveryBody: Bool { allowlist != nil || !jsonPointers.isEmpty || !names.isEmpty }

    /// Whether a named value is written as it is, whatever its shape (the user kept or allowed it).
    func isKept(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return kept.contains(lowered) || allowlist?.contains(lowered) == true
    }

    /// The interaction with every secret value replaced, and what was redacted (one name per value:
    /// `Authorization`, `api_key`, `password`, `JWT`, `echoed secret`).
    public func redact(_ interaction: Interaction) -> (interaction: Interaction, redacted: [String]) {
        redact(interaction, schema: nil)
    }

    /// The same, the messages of a gRPC call read as JSON by `schema` (`--proto-descriptor`) where it knows
    /// their types, so their members are redacted by name as a JSON body's are.
    public func redact(_ interaction: Interaction, schema: GRPCSchema?) -> (
        interaction: Interaction, redacted: [String]
    ) {
        var redacted: [String] = []
        var copy = interaction
        let grpcCall = Self.isGRPCCall(interaction)
        let grpcAnswer = grpcCall && GRPC.isGRPC(contentType: interaction.response.headers["Content-Type"])
        var secrets = self.secrets(in: interaction)
        if grpcCall { secrets = Self.merging(secrets, grpcSecrets(in: interaction, schema: schema)) }

        // Echoes of the request's secrets in the response are written with the placeholder that names where the
        // request carried them, so replay can give the live value back; a value that is wholly one is labelled
        // before the names are looked at, which would write the plain one.
        var echoes = 0
        var usedLabels: Set<Int> = []
        let plain = EchoSearch(secrets)
        let labelling = !grpcAnswer && Self.responseEchoes(interaction, plain)
        let search = labelling ? plain.labelled(echoLabels(of: interaction.request)) : plain
        let response =
            labelling
            ? labellingWholeEchoes(in: interaction.response, search, used: &usedLabels, count: &echoes)
            : interaction.response

        copy.request.headers = redact(headers: interaction.request.headers, noting: &redacted)
        copy.response.headers = redact(headers: response.headers, noting: &redacted)
        if !interaction.response.trailers.isEmpty {
            copy.response.trailers = redact(headers: interaction.response.trailers, noting: &redacted)
        }
        copy.request.target = redact(target: interaction.request.target, noting: &redacted)
        if grpcCall {
            // Messages are redacted one by one, echoes included, their frames written anew.
            copy.request.body = redactGRPCRequest(
                interaction, schema: schema, echoing: secrets, noting: &redacted)
        } else {
            copy.request.body = redact(
                body: interaction.request.body, headers: interaction.request.headers, side: .request,
                noting: &redacted)
        }
        if grpcAnswer {
            redactGRPCResponse(interaction, into: &copy, schema: schema, echoing: secrets, noting: &redacted)
        } else if let chunks = interaction.chunks {
            // A stream: each chunk as text, so the body stays the chunks joined.
            copy.chunks = chunks.map { chunk in
                ResponseChunk(
                    offsetMilliseconds: chunk.offsetMilliseconds,
                    bytes: redactText(chunk.bytes, headers: response.headers, noting: &redacted))
            }
            copy.response.body = copy.chunks?.joinedBytes ?? []
        } else {
            copy.response.body = redact(
                body: response.body, headers: response.headers, side: .response, noting: &redacted)
        }

        // Echoes: the same values anywhere else in the interaction.
        if !secrets.isEmpty {
            copy.request.target = String(
                decoding: plain.replace(in: Array(copy.request.target.utf8), count: &echoes), as: UTF8.self)
            copy.request.headers = replace(plain, in: copy.request.headers, count: &echoes)
            if !grpcCall {
                let binary = !Self.isText(copy.request.headers["Content-Type"]?.lowercased() ?? "")
                copy.request.body = Self.transformContent(copy.request.body, headers: copy.request.headers) {
                    plain.replace(in: $0, count: &echoes, sameLength: binary)
                }
            }
            var headers = HTTP.Headers()
            for field in copy.response.headers {
                let value = search.replace(in: Array(field.value.utf8), count: &echoes, used: &usedLabels)
                headers.add(name: field.name, value: String(decoding: value, as: UTF8.self))
            }
            copy.response.headers = headers
            if grpcAnswer {
                // Done message by message above: a byte search would break the frames' lengths.
            } else if let chunks = copy.chunks {
                copy.chunks = chunks.map { chunk in
                    ResponseChunk(
                        offsetMilliseconds: chunk.offsetMilliseconds,
                        bytes: search.replace(in: chunk.bytes, count: &echoes, used: &usedLabels))
                }
                copy.response.body = copy.chunks?.joinedBytes ?? []
            } else {
                let binary = !Self.isText(copy.response.headers["Content-Type"]?.lowercased() ?? "")
                copy.response.body = Self.transformContent(copy.response.body, headers: copy.response.headers) {
                    search.replace(in: $0, count: &echoes, sameLength: binary, used: &usedLabels)
                }
            }
            copy.echoSources = search.sources(of: usedLabels)
            redacted += Array(repeating: "echoed secret", count: echoes)
        }
        if let conversation = interaction.webSocket {
            copy.webSocket = redact(conversation, echoing: secrets, noting: &redacted)
        }
        return (copy, redacted)
    }

    /// Header values redacted by name and by shape.
    public func redact(headers: HTTP.Headers) -> HTTP.Headers {
        var ignored: [String] = []
        return redact(headers: headers, noting: &ignored)
    }

    /// The request's URL as reports, the journal and logs show it: its origin, when it names one, then the
    /// target with the values of secret query parameters replaced.
    public func redactedURL(of request: HTTP.Request) -> String {
        let target = redact(target: request.target)
        guard let origin = request.origin else { return target }
        return origin + target
    }

    /// The target with the values of secret query parameters replaced; the rest is kept as sent.
    public func redact(target: String) -> String {
        var ignored: [String] = []
        return redact(target: target, noting: &ignored)
    }

    /// Which message a body belongs to: a request's secrets become whole placeholders (so matching
    /// ignores them), a response's are cut out of the text around them.
    enum Side {
        case request, response
    }

    private func redact(headers: HTTP.Headers, noting redacted: inout [String]) -> HTTP.Headers {
        var result = HTTP.Headers()
        for field in headers {
            guard !Redactor.isPlaceholder(field.value), !field.value.isEmpty else {
                result.add(name: field.name, value: field.value)
                continue
            }
            guard isSecretHeader(field.name) else {
                // A token a browser's WebSocket can only send as a subprotocol (`...k8s.io.TOKEN`).
                let offered =
                    field.name.lowercased() == "sec-websocket-protocol"
                    ? redactSubprotocols(field.value, noting: &redacted) : field.value
                // The cheap look at the value first: most values hold nothing shaped like a credential.
                let value =
                    byShape && CredentialValues.mightHoldCredential(offered) && !isKept(field.name)
                        && !Self.framingHeaders.contains(field.name.lowercased())
                    ? CredentialValues.redacting(offered, noting: &redacted) : offered
                result.add(name: field.name, value: value)
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

    /// `a=1&api_key=x` with secret values replaced (query strings and form bodies): by name, or whole
    /// when the value holds a secret by its shape.
    func redact(pairs: String, noting redacted: inout [String]) -> String {
        var changed = false
        let parts = pairs.split(separator: "&", omittingEmptySubsequences: false).map { part -> String in
            guard let equals = part.firstIndex(of: "=") else { return String(part) }
            let name = String(part[..<equals]).removingPercentEncodingLeniently()
            let value = part[part.index(after: equals)...]
            guard !value.isEmpty, value != Redactor.placeholder else { return String(part) }
            if isSecretQueryParameter(name) {
                redacted.append(name)
            } else if byShape && CredentialValues.mightHoldCredential(value) && !isKept(name) {
                var kinds: [String] = []
                let plain = String(value).removingPercentEncodingLeniently()
                guard
                    !CredentialValues.spans(in: Array(value.utf8)).isEmpty
                        || !CredentialValues.spans(in: Array(plain.utf8)).isEmpty
                else { return String(part) }
                _ = CredentialValues.redacting(plain, noting: &kinds)
                redacted += kinds.isEmpty ? [name] : kinds
            } else {
                return String(part)
            }
            changed = true
            return part[..<equals] + "=" + Redactor.placeholder
        }
        return changed ? parts.joined(separator: "&") : pairs
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
