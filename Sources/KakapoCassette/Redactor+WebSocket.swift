import KakapoHTTP
import KakapoJSON

/// A WebSocket conversation's share of redaction (issue 31). Every message is redacted as a body is: a text
/// message by the names of its JSON members (`{"type":"auth","token":"..."}`), the `--redact-json` pointers and
/// the allowlist, and by the shape of its values (bearer tokens, JWTs); a binary one only where a secret of the
/// interaction is echoed in it. A client's message is redacted as a request body (a secret member becomes the
/// placeholder whole, which replay matches as a wildcard), a server's as a response body (only the secret is
/// cut out). The subprotocol and the close reason are redacted as header values.
///
/// The cost is linear in the conversation's bytes: each message is looked at once, and the secrets that client
/// messages add to the echo search are at most `largestMessageSecretCount`.
extension Redactor {
    /// The most secrets taken from client messages (an auth message's token) to look for in the rest of the
    /// interaction: each is searched for in every message, so a conversation that sends a new token with each
    /// of 100,000 messages must not make the search quadratic.
    static let largestMessageSecretCount = 32

    /// Headers that make a message's text read as a body of unknown type: text, JSON when it parses.
    private static let messageHeaders = HTTP.Headers()

    /// The secret values client messages carry (secret members of JSON messages, secret-shaped values of
    /// text ones, the `--redact-json` pointers), at most `largestMessageSecretCount` of them.
    func secrets(in conversation: WebSocketConversation) -> Set<String> {
        var values: Set<String> = []
        guard byShape || readsEveryBody else { return values }
        for message in conversation.messages where message.from == .client {
            guard values.count < Self.largestMessageSecretCount else { break }
            guard case .text(let text) = message.payload else {
                if byShape, case .binary(let bytes) = message.payload {
                    for value in Self.binarySecrets(in: bytes) where value.utf8.count >= 6 {
                        guard values.count < Self.largestMessageSecretCount else { break }
                        values.insert(value)
                    }
                }
                continue
            }
            let bytes = Array(text.utf8)
            guard readsEveryBody || CredentialValues.mightHoldCredential(bytes) else {
                continue
            }
            var found: Set<String> = []
            if JSONParser.looksLikeContainer(bytes), let json = try? JSONParser.parse(bytes) {
                for pointer in jsonPointers {
                    if let value = json[pointer: pointer]?.stringValue { found.insert(value) }
                }
                if byShape || allowlist != nil || !names.isEmpty { collectSecrets(in: json, name: nil, into: &found) }
            } else if byShape {
                found.formUnion(CredentialValues.values(in: text))
            }
            // Only the values the echo search would use count against the bound.
            for value in found where value.utf8.count >= 6 && value != Redactor.placeholder {
                guard values.count < Self.largestMessageSecretCount else { break }
                values.insert(value)
            }
        }
        return values
    }

    /// `conversation` with every message, the subprotocol and the close reason redacted, and `secrets` (the
    /// interaction's, longest first) replaced wherever they are echoed; what was redacted is added to
    /// `redacted` (`token`, `JWT`, `echoed secret`, one per value).
    func redact(_ conversation: WebSocketConversation, echoing secrets: [[UInt8]], noting redacted: inout [String])
        -> WebSocketConversation
    {
        var echoes = 0
        var copy = conversation
        let search = EchoSearch(secrets)
        // A new array, filled once: changing the messages in place through the optional would copy them all
        // for each message.
        var messages: [WebSocketMessage] = []
        messages.reserveCapacity(conversation.messages.count)
        for message in conversation.messages {
            var clean = message
            switch message.payload {
            case .text(let text):
                let bytes = Array(text.utf8)
                var rewritten = redact(
                    body: bytes, headers: Self.messageHeaders, side: message.from == .client ? .request : .response,
                    noting: &redacted)
                rewritten = search.replace(in: rewritten, count: &echoes)
                // The placeholder is ASCII and replaces whole secrets (valid UTF-8 themselves), so the text
                // stays valid UTF-8.
                if rewritten != bytes { clean.payload = .text(String(decoding: rewritten, as: UTF8.self)) }
            case .binary(let bytes):
                // Masked at the same length: a binary message's own framing (MQTT, protobuf) counts bytes.
                let masked = maskBinary(bytes, noting: &redacted) ?? bytes
                let rewritten = search.replace(in: masked, count: &echoes, sameLength: true)
                if rewritten != bytes { clean.payload = .binary(rewritten) }
            }
            messages.append(clean)
        }
        copy.messages = messages
        if let subprotocol = conversation.subprotocol {
            let cut = redactSubprotocols(subprotocol, noting: &redacted)
            copy.subprotocol = redactValue(cut, echoing: search, echoes: &echoes, noting: &redacted)
        }
        if let close = conversation.close, !close.reason.isEmpty {
            let reason = redactValue(close.reason, echoing: search, echoes: &echoes, noting: &redacted)
            // The placeholder can be longer than the secret it replaces; a close frame carries 123 bytes of
            // reason, and a cassette with more would not load.
            copy.close?.reason = WebSocketClose.cut(reason)
        }
        redacted += Array(repeating: "echoed secret", count: echoes)
        return copy
    }

    /// A short text (a subprotocol, a close reason) with secret-shaped values and echoed secrets replaced.
    private func redactValue(
        _ value: String, echoing search: EchoSearch, echoes: inout Int, noting redacted: inout [String]
    ) -> String {
        var text = byShape ? CredentialValues.redacting(value, noting: &redacted) : value
        if !search.isEmpty {
            let bytes = Array(text.utf8)
            let replaced = search.replace(in: bytes, count: &echoes)
            if replaced != bytes { text = String(decoding: replaced, as: UTF8.self) }
        }
        return text
    }
}

extension Redactor {
    /// A live client text message as replay compares it with a recorded one that holds the placeholder (a
    /// text message redacted in place: `auth Bearer [REDACTED]`, a handshake token echoed): the live message
    /// with its secret-shaped values, and the secrets of the live handshake `request`, replaced the way
    /// recording replaced them. `live` itself when `recorded` holds no placeholder.
    package func clientTextForMatching(_ live: String, recorded: String, handshake request: HTTP.Request) -> String {
        guard Self.firstOccurrence(of: Array(Redactor.placeholder.utf8), in: Array(recorded.utf8), from: 0) != nil
        else { return live }
        var ignored: [String] = []
        var bytes = Array(live.utf8)
        if byShape { bytes = CredentialValues.redacting(bytes, noting: &ignored) ?? bytes }
        let secrets = self.secrets(
            in: Interaction(
                request: request, response: HTTP.Response(status: 101), recordedAt: "", durationMilliseconds: 0)
        )
        var count = 0
        if !secrets.isEmpty { bytes = Self.replace(secrets, in: bytes, count: &count) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A live client binary message as replay compares it with a recorded one that recording masked: its
    /// credential shapes, and the secrets of the live handshake `request`, masked at their own length.
    package func clientBinaryForMatching(_ live: [UInt8], handshake request: HTTP.Request) -> [UInt8] {
        let secrets = self.secrets(
            in: Interaction(
                request: request, response: HTTP.Response(status: 101), recordedAt: "", durationMilliseconds: 0)
        )
        return binaryForMatching(live, echoing: secrets)
    }
}

/// Credentials carried in `Sec-WebSocket-Protocol`, the one header a browser's `WebSocket` lets a page set:
/// - after a prefix that names them: Kubernetes `base64url.bearer.authorization.k8s.io.TOKEN`, OpenAI
///   Realtime `openai-insecure-api-key.KEY`, `bearer.TOKEN`;
/// - after a prefix that may, when the rest looks like a credential: `access_token.`, `token.`, `jwt.`,
///   `apikey.`, `api-key.`, `auth.`, and AWS AppSync's `header-` (its authorization headers, base64url);
/// - as the entry after a marker entry: Deepgram's `token, KEY` and `bearer, TOKEN`.
/// The credential becomes the placeholder (`base64url.bearer.authorization.k8s.io.[REDACTED]`), and is one
/// of the interaction's secrets, so its echoes (a message, the close reason) go too. Replay answers a
/// redacted subprotocol with the client's offered entry that fits (`WebSocketReplay.answeredSubprotocol`).
/// (graphql-ws, Hasura and Supabase send their tokens in the first message instead, redacted as a body.)
extension Redactor {
    /// Prefixes whose rest is a credential, lowercased.
    static let credentialSubprotocolPrefixes = [
        "base64url.bearer.authorization.k8s.io.", "openai-insecure-api-key.", "bearer.",
    ]
    /// Prefixes whose rest is a credential when it looks like one (`isCredentialShaped`), lowercased.
    static let tokenSubprotocolPrefixes = [
        "access_token.", "access-token.", "token.", "jwt.", "apikey.", "api-key.", "auth.", "header-",
    ]
    /// Entries that say the next entry is a credential, lowercased.
    static let credentialSubprotocolMarkers: Set<String> = ["token", "bearer", "access_token", "access-token"]

    /// The credentials in a `Sec-WebSocket-Protocol` value (a list, or one subprotocol), each with the entry's
    /// index; empty when shapes are off or the header is kept.
    func subprotocolCredentials(in value: String) -> [(entry: Int, secret: Substring)] {
        guard byShape, !isKept("Sec-WebSocket-Protocol"), allowlist == nil else { return [] }
        let entries = value.split(separator: ",", omittingEmptySubsequences: false).map { Self.trimmed($0) }
        var found: [(entry: Int, secret: Substring)] = []
        for (index, entry) in entries.enumerated() {
            if index > 0, Self.credentialSubprotocolMarkers.contains(entries[index - 1].lowercased()),
                Self.isCredentialShaped(entry, minimum: 8)
            {
                found.append((index, entry))
                continue
            }
            let lowered = entry.lowercased()
            if let prefix = Self.credentialSubprotocolPrefixes.first(where: { lowered.hasPrefix($0) }) {
                let rest = entry.dropFirst(prefix.count)
                if !rest.isEmpty && rest != Redactor.placeholder { found.append((index, rest)) }
            } else if let prefix = Self.tokenSubprotocolPrefixes.first(where: { lowered.hasPrefix($0) }) {
                let rest = entry.dropFirst(prefix.count)
                if Self.isCredentialShaped(rest, minimum: 16) { found.append((index, rest)) }
            }
        }
        return found
    }

    /// `value` with each credential `subprotocolCredentials` finds replaced by the placeholder, the rest of
    /// the list (entries, commas, spaces) as it was; each one redacted is noted as `subprotocol token`.
    func redactSubprotocols(_ value: String, noting redacted: inout [String]) -> String {
        let credentials = subprotocolCredentials(in: value)
        guard !credentials.isEmpty else { return value }
        var parts = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        for (index, secret) in credentials {
            // The credential ends its entry: what follows it in the part is spaces.
            let part = parts[index]
            let trimmedEnd = part.utf8.count - (part.utf8.reversed().prefix { $0 == 0x20 || $0 == 0x09 }.count)
            let start = trimmedEnd - secret.utf8.count
            let bytes = Array(part.utf8)
            parts[index] =
                String(decoding: bytes[..<start], as: UTF8.self) + Redactor.placeholder
                + String(decoding: bytes[trimmedEnd...], as: UTF8.self)
            redacted.append("subprotocol token")
        }
        return parts.joined(separator: ",")
    }

    /// Whether `text` looks like a credential: at least `minimum` characters of the base64, base64url and
    /// JWT alphabets, with both a letter and a digit (so `token.chat-v2` stays).
    static func isCredentialShaped(_ text: Substring, minimum: Int) -> Bool {
        guard text.utf8.count >= minimum, text != Redactor.placeholder else { return false }
        var letter = false
        var digit = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): letter = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = true
            case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"), UInt8(ascii: "+"),
                UInt8(ascii: "/"), UInt8(ascii: "="):
                break
            default: return false
            }
        }
        return letter && digit
    }

    /// `text` without the spaces and tabs around it.
    private static func trimmed(_ text: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) })
        else { return text[text.endIndex...] }
        return text[first...last]
    }
}
