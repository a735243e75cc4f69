/// Which header, query, form and JSON field names hold credentials, by the shape of the name rather
/// than a fixed list: `X-API-Token`, `private_token`, `clientSecret`, `X-Goog-Api-Key`, `refresh_token`,
/// `X-Amz-Signature`, `client_assertion`, `session`, `passwd`.
///
/// A name is split into words at `-`, `_`, `.`, spaces and camelCase boundaries (`apiKey`, `APIKey`,
/// `api-key` and `API_KEY` are all `api key`), and it is a credential when one of its words is a
/// credential word (token, secret, password, passwd, passphrase, signature, credential, session,
/// assertion, auth, authorization, cookie, csrf, ...) or a run-together form of one (`apikey`,
/// `accesstoken`, `csrftoken`). Three decisions keep ordinary names out:
/// - `key` counts only after a word that makes it a credential (`api`, `auth`, `access`, `secret`,
///   `private`, `client`, `subscription`, ...) or as the whole name of a query parameter or form field
///   (Google's `?key=`): `Cache-Key`, `key_count`, `primary_key`, `keyboard`, `monkey` and a JSON `"key"`
///   are not credentials.
/// - A name whose last word describes the credential rather than holding it is not one: `token_type`,
///   `expires_in`, `password_hint`, `oauth_signature_method`, `session_count`, `auth_url`,
///   `client_assertion_type`.
/// - Pagination tokens are not secrets: `page_token`, `nextPageToken`, `NextToken`,
///   `continuation_token`, `syncToken`; nor are correlation ids the client chooses and the server echoes:
///   MCP's `progressToken`, `idempotency_token`, `trace_token` (and `state`, `nonce`,
///   `requestId`, `Idempotency-Key`, `X-Request-Id`, which no rule takes for credentials).
///
/// CORS headers (`Access-Control-Allow-Credentials`), MCP's `Mcp-Session-Id` (a routing id the server hands
/// out and a replayed client must get back) and, in JSON, ids (`sessionId`, `api_key_id`) are not
/// credentials either. The short names of card and identity secrets are words too (`pass`, `pin`, `cvv`,
/// `ssn`, `hmac`). `auth` is a word of its own, so `author` is not a credential; `tokens` is a count (`max_tokens`), not
/// a token. The exact name `code` is the OAuth authorization code in query strings and form bodies only
/// (in JSON it is an error code).
enum CredentialNames {
    /// Where a name was found.
    enum Place {
        case header
        /// A query parameter or a form field.
        case query
        case json
    }

    static func isCredential(_ name: String, in place: Place) -> Bool {
        // Most names share no letters with any credential word: answered without splitting.
        guard mightBeCredential(name) else { return false }
        let words = words(of: name)
        guard let last = words.last else { return false }
        if place == .query && words == ["code"] { return true }
        if words.count > 1 && describingWords.contains(last) { return false }
        // CORS headers name credentials without holding any (`Access-Control-Allow-Credentials: true`).
        if place == .header && words.starts(with: ["access", "control"]) { return false }
        // A session id a protocol hands out for routing, which the client sends back (MCP's `Mcp-Session-Id`,
        // which the MCP specification forbids servers to use for authentication): a replay needs the recorded one.
        if place == .header && routingHeaders.contains(words) { return false }
        // In JSON an id names a resource more often than it grants access (`sessionId`, `api_key_id`), and
        // a client sends it back in the next URL: kept, so a replayed flow still finds its way.
        if place == .json && (last == "id" || last == "ids" || last == "sessionid") { return false }
        for (position, word) in words.enumerated() {
            let previous = position > 0 ? words[position - 1] : nil
            if word == "key" {
                if let previous, keyQualifiers.contains(previous) { return true }
                if words.count == 1 && place != .json { return true }
                continue
            }
            if isCredentialWord(word) {
                if let previous, paginationWords.contains(previous) || correlationWords.contains(previous),
                    word.hasSuffix("token")
                {
                    continue
                }
                return true
            }
        }
        return false
    }

    /// Whether a member inside a credential-named one (`{"auth": {"bearer": ...}}`) is not itself secret:
    /// what describes the credential (`type`, `expires_in`, `scope`), an id, or who it belongs to (`user`,
    /// `username`, `email`).
    static func describesCredential(_ name: String) -> Bool {
        let words = words(of: name)
        guard let last = words.last else { return true }
        return describingWords.contains(last) || ownerWords.contains(last) || last == "id" || last == "ids"
    }

    /// Words that name whose a credential is, or label it, rather than hold it.
    private static let ownerWords: Set<String> = [
        "user", "username", "login", "email", "name", "account", "owner", "subject", "issuer", "audience", "realm",
        "region", "host", "domain", "tenant", "label", "description", "title", "comment", "note",
    ]

    /// Whether a member's credential-named value holds credentials in its members (`auth`, `credentials`,
    /// `secrets`), as opposed to naming a record about one (`session`, `cookie`).
    static func holdsCredentials(_ name: String) -> Bool {
        guard isCredential(name, in: .json) else { return false }
        let words = words(of: name)
        return !words.contains { $0 == "session" || $0 == "sessions" || $0 == "cookie" || $0 == "csrf" }
    }

    /// Lowercased words: `X-Goog-Api-Key` is `x goog api key`, `clientSecret` is `client secret`,
    /// `APIKey` is `api key`, `refresh_token` is `refresh token`.
    static func words(of name: String) -> [String] {
        var words: [String] = []
        var current: [UInt8] = []
        let bytes = Array(name.utf8)
        func isUpper(_ byte: UInt8) -> Bool { byte >= 0x41 && byte <= 0x5A }
        func isLower(_ byte: UInt8) -> Bool { byte >= 0x61 && byte <= 0x7A }
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        func flush() {
            if !current.isEmpty { words.append(String(decoding: current, as: UTF8.self)) }
            current = []
        }
        for (index, byte) in bytes.enumerated() {
            guard isUpper(byte) || isLower(byte) || isDigit(byte) || byte >= 0x80 else {
                flush()
                continue
            }
            if isUpper(byte), let before = index > 0 ? bytes[index - 1] : nil {
                // `apiKey` splits before K; `APIKey` splits before K (the last capital of a run that
                // starts a lowercase word).
                let next = index + 1 < bytes.count ? bytes[index + 1] : nil
                if isLower(before) || isDigit(before) || (isUpper(before) && next.map(isLower) == true) { flush() }
            }
            current.append(isUpper(byte) ? byte + 0x20 : byte)
        }
        flush()
        return words
    }

    private static func isCredentialWord(_ word: String) -> Bool {
        if credentialWords.contains(word) { return true }
        for stem in credentialSuffixes where word.hasSuffix(stem) && word.count > stem.count {
            // `csrftoken`, `accesstoken`, `clientsecret`, `apikey`; not `pagetoken`, `nexttoken`.
            if stem == "token", paginationWords.contains(where: { word.hasPrefix($0) }) { return false }
            if stem == "key" { return keyQualifiers.contains(String(word.dropLast(3))) }
            return true
        }
        return false
    }

    private static let credentialWords: Set<String> = [
        "token", "secret", "secrets", "password", "passwords", "passwd", "passphrase", "passcode", "pwd", "signature",
        "sig", "credential", "credentials", "session", "assertion", "auth", "authorization", "authentication",
        "cookie", "csrf", "xsrf", "jwt", "otp", "totp", "sessionid", "apikey", "pass", "pin", "cvv", "cvc", "cvv2",
        "ssn", "hmac",
    ]

    /// Run-together words that end in one of these are credentials (`accesstoken`, `clientsecret`,
    /// `userpassword`); `key` only after a qualifier (`apikey`, `secretkey`).
    private static let credentialSuffixes = ["token", "secret", "password", "passwd", "key"]

    /// Words that make a following `key` a credential.
    private static let keyQualifiers: Set<String> = [
        "api", "auth", "access", "secret", "private", "client", "signing", "encryption", "master", "license",
        "subscription", "consumer", "app", "application", "developer", "account", "service", "session",
    ]

    /// Headers that name a session for routing, not for access, in words.
    private static let routingHeaders: Set<[String]> = [["mcp", "session", "id"]]

    /// Words before `token` that make it a page marker, not a credential.
    private static let paginationWords: Set<String> = [
        "page", "next", "nextpage", "prev", "previous", "continuation", "sync", "resume", "cursor", "pagination",
    ]

    /// Words before `token` that make it a correlation id the client chose and the server echoes (MCP's
    /// `progressToken`, an idempotency token): not a credential, and a replay that wrote the placeholder in
    /// its place would break the protocol.
    private static let correlationWords: Set<String> = ["progress", "idempotency", "correlation", "trace"]

    /// Last words that describe a credential without holding it.
    private static let describingWords: Set<String> = [
        "type", "types", "method", "methods", "hint", "expires", "expiry", "expiration", "exp", "ttl", "in", "at",
        "length", "len", "count", "size", "url", "uri", "endpoint", "path", "name", "policy", "mode", "required",
        "enabled", "supported", "version", "format", "kind", "status", "lifetime", "scope", "scopes", "algorithm",
        "alg", "timeout", "changed", "updated", "created", "provider", "strategy", "level",
    ]

    /// False when `name` shares no stem with any credential word (most names: `Content-Type`, `page`),
    /// found without copying or lowercasing it.
    private static func mightBeCredential(_ name: String) -> Bool {
        CredentialValues.mightHoldCredential(name)
    }
}
