import KakapoGRPC
import KakapoHTTP
import KakapoJSON

/// A gRPC call's share of redaction: each length-prefixed message of the request and of the answer is redacted
/// by the rules of a JSON body, and framed again with its new length.
/// - With a descriptor set (`--proto-descriptor`) that knows the method, a message is read as JSON by its type,
///   redacted as a JSON body is (names, `--redact-json` pointers, the allowlist, values by their shape, echoed
///   secrets), and, when anything changed, written again from that JSON: the cassette shows `"[REDACTED]"` and
///   replay sends the redacted bytes. A value that cannot be written as the placeholder (a number, an enum, a
///   `bytes` field) is left out instead, as its field's default.
/// - Without one (or for what the JSON does not hold: unknown fields), field names are unknown, so values are
///   found by their shape (JWTs, bearer tokens, AWS key ids: `CredentialValues`) and echoed secrets: the
///   message's wire format is walked (`GRPCWireStrings`), each string or bytes field looked at, nested
///   messages too, and a field that holds one is replaced (whole in a request, so matching can leave it out;
///   only the secret in an answer), the lengths around it written anew. Bytes that are not a message are
///   searched as they are.
/// - `application/grpc+json` messages are JSON bodies. Compressed messages are read when `grpc-encoding` is gzip
///   or deflate, and compressed again when something changed; other encodings are kept as they came.
extension Redactor {
    /// The most secrets taken from request messages to look for elsewhere in the call (as for WebSockets).
    static let largestGRPCSecretCount = 32

    /// Whether `interaction` is a gRPC call (by its request's content type), not a WebSocket.
    static func isGRPCCall(_ interaction: Interaction) -> Bool {
        interaction.webSocket == nil && GRPC.isGRPC(interaction.request)
    }

    /// `secrets` and `extra` together, longest first, as `secrets(in:)` gives them.
    static func merging(_ secrets: [[UInt8]], _ extra: Set<String>) -> [[UInt8]] {
        guard !extra.isEmpty else { return secrets }
        var all = Set(secrets)
        for value in extra where value.utf8.count >= 6 && value != Redactor.placeholder {
            all.insert(Array(value.utf8))
        }
        return all.sorted { $0.count > $1.count }
    }

    /// The secret values a call's request messages carry (secret members with a schema, secret-shaped values),
    /// at most `largestGRPCSecretCount`.
    func grpcSecrets(in interaction: Interaction, schema: GRPCSchema?) -> Set<String> {
        guard byShape || readsEveryBody else { return [] }
        let request = interaction.request
        var values: Set<String> = []
        for message in Self.splitFrames(request.body).messages {
            guard values.count < Self.largestGRPCSecretCount else { break }
            guard let content = Self.content(of: message, encoding: request.headers["grpc-encoding"])?.bytes else {
                continue
            }
            var found: Set<String> = []
            if let json = Self.json(of: content, schema: schema, path: request.path, side: .request) {
                for pointer in jsonPointers {
                    if let value = json[pointer: pointer]?.stringValue { found.insert(value) }
                }
                if byShape || allowlist != nil || !names.isEmpty { collectSecrets(in: json, name: nil, into: &found) }
            } else if byShape && CredentialValues.mightHoldCredential(content) {
                let outcome = GRPCWireStrings.rewriting(content) { leaf in
                    found.formUnion(CredentialValues.values(in: String(decoding: leaf, as: UTF8.self)))
                    return nil
                }
                if outcome == .notAMessage {
                    found.formUnion(CredentialValues.values(in: String(decoding: content, as: UTF8.self)))
                }
            }
            for value in found where value.utf8.count >= 6 && value != Redactor.placeholder {
                guard values.count < Self.largestGRPCSecretCount else { break }
                values.insert(value)
            }
        }
        return values
    }

    /// The request's body with each message redacted; as it was when nothing in it is secret.
    func redactGRPCRequest(
        _ interaction: Interaction, schema: GRPCSchema?, echoing secrets: [[UInt8]], noting redacted: inout [String]
    ) -> [UInt8] {
        let request = interaction.request
        let context = MessageContext(
            path: request.path, side: .request, encoding: request.headers["grpc-encoding"], schema: schema,
            search: EchoSearch(secrets))
        var echoes = 0
        let body = redactFramed(request.body, context, echoes: &echoes, noting: &redacted)
        redacted += Array(repeating: "echoed secret", count: echoes)
        return body?.body ?? request.body
    }

    /// The answer's body with each message redacted, and its chunks cut again one per message (each at the
    /// offset of the chunk its last byte came in, as the cassette writes them); unchanged when nothing is secret.
    func redactGRPCResponse(
        _ interaction: Interaction, into copy: inout Interaction, schema: GRPCSchema?, echoing secrets: [[UInt8]],
        noting redacted: inout [String]
    ) {
        let context = MessageContext(
            path: interaction.request.path, side: .response,
            encoding: interaction.response.headers["grpc-encoding"], schema: schema, search: EchoSearch(secrets))
        let body = interaction.chunks?.joinedBytes ?? interaction.response.body
        var echoes = 0
        defer { redacted += Array(repeating: "echoed secret", count: echoes) }
        guard let clean = redactFramed(body, context, echoes: &echoes, noting: &redacted) else { return }
        copy.response.body = clean.body
        guard let chunks = interaction.chunks else { return }
        let offsets = CassetteCodec.messageOffsets(clean.original, chunks: chunks)
        var rewritten = zip(clean.messages, offsets).map { ResponseChunk(offsetMilliseconds: $1, bytes: $0.framed) }
        if !clean.tail.isEmpty {
            rewritten.append(ResponseChunk(offsetMilliseconds: chunks.last?.offsetMilliseconds ?? 0, bytes: clean.tail))
        }
        copy.chunks = rewritten
    }

    /// A live gRPC request's body as recording redacts it without a schema (by the shape of its values), for
    /// comparing it with a recorded one that holds the placeholder; nil when `body` is not whole gRPC frames.
    static func grpcBodyForMatching(_ body: [UInt8]) -> [UInt8]? {
        let split = splitFrames(body)
        guard split.tail.isEmpty, !split.messages.isEmpty else { return nil }
        let context = MessageContext(
            path: "", side: .request, encoding: nil, schema: nil, search: EchoSearch([]))
        var ignored: [String] = []
        var echoes = 0
        return Redactor().redactFramed(body, context, echoes: &echoes, noting: &ignored)?.body ?? body
    }

    /// What redacting one message needs to know about the call.
    struct MessageContext {
        /// The request's path, which names the method (and so the message types, with a schema).
        let path: String
        let side: Side
        /// The side's `grpc-encoding`, for compressed messages.
        let encoding: String?
        let schema: GRPCSchema?
        /// The interaction's secrets, to replace where they are echoed.
        let search: EchoSearch

        /// Whether the method is one that signs in or hands out tokens (`Redactor.isAuthenticationCall`).
        var authenticates: Bool { Redactor.isAuthenticationCall(path) }
    }

    /// Whether a gRPC method signs in or hands out credentials: its name, or its service's, has a word such as
    /// authenticate, auth, login, signin, token, password or credential (etcd's `/etcdserverpb.Auth/Authenticate`
    /// and `Auth/UserAdd`, `UserChangePassword`; not `CountTokens`). Without a descriptor set nothing tells the
    /// password or the token from the user's name in such a call's messages, so every text field in them is
    /// redacted.
    package static func isAuthenticationCall(_ path: String) -> Bool {
        let parts = path.split(separator: "/")
        guard parts.count >= 2 else { return false }
        // The method's name, and the service's own name (etcd's `Auth` service: `UserAdd` carries a password).
        let service = parts[parts.count - 2].split(separator: ".").last.map(String.init) ?? ""
        for name in [String(parts[parts.count - 1]), service] {
            let words = CredentialNames.words(of: name)
            if words.contains(where: { authenticationWords.contains($0) }) { return true }
            if zip(words, words.dropFirst()).contains(where: {
                ($0 == "sign" || $0 == "log") && ($1 == "in" || $1 == "on")
            }) {
                return true
            }
        }
        return false
    }

    /// Words of a method or service that signs in or hands out credentials; not `tokens`, a count
    /// (`CountTokens`).
    private static let authenticationWords: Set<String> = [
        "authenticate", "authentication", "auth", "login", "logon", "signin", "token", "password", "passwords",
        "passwd", "credential", "credentials", "secret", "secrets", "apikey", "oauth",
    ]

    /// A live gRPC request to an authentication method, without a descriptor set, as recording redacts it (every
    /// text field the placeholder), for comparing with its recording.
    func grpcAuthenticationForMatching(_ request: HTTP.Request) -> [UInt8] {
        let context = MessageContext(
            path: request.path, side: .request, encoding: request.headers["grpc-encoding"], schema: nil,
            search: EchoSearch([]))
        var ignored: [String] = []
        var echoes = 0
        return redactFramed(request.body, context, echoes: &echoes, noting: &ignored)?.body ?? request.body
    }

    /// A gRPC body's whole frames and what follows them (a frame cut short, or bytes that are no frame).
    static func splitFrames(_ body: [UInt8]) -> (messages: [GRPCMessage], tail: [UInt8]) {
        var pending = body
        let frames = GRPC.takeFrames(from: &pending)
        return (frames.map { GRPCMessage(compressed: $0[0] == 1, bytes: Array($0[5...])) }, pending)
    }

    /// `body` with each message redacted, with the messages before and after; nil when nothing changed.
    private func redactFramed(
        _ body: [UInt8], _ context: MessageContext, echoes: inout Int, noting redacted: inout [String]
    ) -> (body: [UInt8], original: [GRPCMessage], messages: [GRPCMessage], tail: [UInt8])? {
        guard !body.isEmpty else { return nil }
        let (messages, tail) = Self.splitFrames(body)
        var changed = false
        let clean = messages.map { message in
            let result = redact(message, context, echoes: &echoes, noting: &redacted)
            if result != message { changed = true }
            return result
        }
        // What is not a whole frame (an answer broken off) is searched as it is.
        var cleanTail = tail
        if !tail.isEmpty, let cut = redactLeaf(tail, side: .response, context, echoes: &echoes, noting: &redacted) {
            cleanTail = cut
            changed = true
        }
        guard changed else { return nil }
        return (clean.framed + cleanTail, messages, clean, cleanTail)
    }

    /// One message redacted: uncompressed first when its encoding is one Kakapo reads, compressed again after.
    private func redact(
        _ message: GRPCMessage, _ context: MessageContext, echoes: inout Int, noting redacted: inout [String]
    ) -> GRPCMessage {
        guard let (content, coding) = Self.content(of: message, encoding: context.encoding) else { return message }
        let clean = redact(content: content, context, echoes: &echoes, noting: &redacted)
        guard clean != content else { return message }
        return GRPCMessage(compressed: message.compressed, bytes: coding.map { $0.encode(clean) } ?? clean)
    }

    /// A message's uncompressed bytes and the coding to compress them again with; nil when it is compressed by
    /// an encoding Kakapo cannot read (or does not decode).
    static func content(of message: GRPCMessage, encoding: String?) -> (bytes: [UInt8], coding: ContentCoding?)? {
        guard message.compressed else { return (message.bytes, nil) }
        guard let coding = ContentCoding(header: encoding), let decoded = coding.decode(message.bytes) else {
            return nil
        }
        return (decoded, coding)
    }

    /// The message as JSON, by the schema's type for it or (`application/grpc+json`) as it is; nil otherwise.
    private static func json(of content: [UInt8], schema: GRPCSchema?, path: String, side: Side) -> JSONValue? {
        if let schema,
            let json = schema.json(
                of: GRPCMessage(bytes: content), path: path, side: side == .request ? .request : .response)
        {
            return json
        }
        guard JSONParser.looksLikeContainer(content) else { return nil }
        return try? JSONParser.parse(content)
    }

    /// An uncompressed message redacted.
    private func redact(
        content: [UInt8], _ context: MessageContext, echoes: inout Int, noting redacted: inout [String]
    ) -> [UInt8] {
        guard !content.isEmpty else { return content }
        let side: GRPCSchema.Side = context.side == .request ? .request : .response
        var current = content
        var named = false
        if let schema = context.schema,
            let json = schema.json(of: GRPCMessage(bytes: content), path: context.path, side: side)
        {
            named = true
            var kinds: [String] = []
            var count = 0
            var rewritten = redact(jsonValue: json, side: context.side, noting: &kinds)
            if let echoed = Self.replacingEchoes(in: rewritten ?? json, context.search, count: &count) {
                rewritten = echoed
            }
            if let rewritten {
                if let bytes = Self.encode(rewritten, original: json, schema: schema, path: context.path, side: side) {
                    current = bytes
                    redacted += kinds
                    echoes += count
                }
            }
            // When the JSON holds the whole message, the names have had their say; otherwise (unknown fields,
            // a message the JSON could not be written back from) the wire format is searched as well.
            if schema.exactJSON(of: GRPCMessage(bytes: current), path: context.path, side: side) != nil {
                return current
            }
        } else if JSONParser.looksLikeContainer(content), (try? JSONParser.parse(content)) != nil {
            // `application/grpc+json`: the message is a JSON body.
            let clean = redact(body: content, headers: Self.jsonMessageHeaders, side: context.side, noting: &redacted)
            return context.search.replace(in: clean, count: &echoes)
        }
        if byShape, context.authenticates, !named {
            // Every text field: without the message's names nothing tells the password or the token from the
            // user's name.
            let placeholder = Array(Redactor.placeholder.utf8)
            let outcome = GRPCWireStrings.rewriting(current) { leaf in
                guard !leaf.isEmpty, !leaf.starts(with: placeholder), Self.isTextField(leaf) else { return nil }
                redacted.append("authentication field")
                return placeholder
            }
            if case .rewritten(let bytes) = outcome { current = bytes }
        }
        guard (byShape && CredentialValues.mightHoldCredential(current)) || !context.search.isEmpty else {
            return current
        }
        let outcome = GRPCWireStrings.rewriting(current) { leaf in
            redactLeaf(leaf, side: context.side, context, echoes: &echoes, noting: &redacted)
        }
        switch outcome {
        case .unchanged: break
        case .rewritten(let bytes): current = bytes
        case .notAMessage:
            // Not Protocol Buffers: secrets are cut out where they are.
            return redactLeaf(current, side: .response, context, echoes: &echoes, noting: &redacted) ?? current
        }
        // Bytes that read as a message by chance (a string field's fields are no fields) can hide a secret
        // across what looked like fields: one left is cut out where it is, whatever that does to the message.
        if byShape, CredentialValues.mightHoldCredential(current), !CredentialValues.spans(in: current).isEmpty {
            current = CredentialValues.redacting(current, noting: &redacted) ?? current
        }
        return current
    }

    /// Whether a field's bytes are text: valid UTF-8 without control characters.
    private static func isTextField(_ bytes: [UInt8]) -> Bool {
        BodyCoding.isReadableText(bytes) && !bytes.contains(0x0A) && !bytes.contains(0x0D) && !bytes.contains(0x09)
            && String(validating: bytes, as: UTF8.self) != nil
    }

    /// Headers that make a message's bytes read as a JSON body.
    private static let jsonMessageHeaders: HTTP.Headers = ["Content-Type": "application/json"]

    /// A field's bytes with secret-shaped values and echoed secrets replaced, or nil when there is none. A
    /// request's text field becomes the placeholder whole (so matching can leave it out); otherwise only the
    /// secret is replaced.
    private func redactLeaf(
        _ leaf: [UInt8], side: Side, _ context: MessageContext, echoes: inout Int, noting redacted: inout [String]
    ) -> [UInt8]? {
        var output = leaf
        if byShape, CredentialValues.mightHoldCredential(leaf) {
            var kinds: [String] = []
            if let cut = CredentialValues.redacting(leaf, noting: &kinds) {
                redacted += kinds
                output = side == .request && GRPCWireStrings.isValidUTF8(leaf) ? Self.placeholderBytes : cut
            }
        }
        output = context.search.replace(in: output, count: &echoes)
        return output == leaf ? nil : output
    }

    private static let placeholderBytes = Array(Redactor.placeholder.utf8)

    /// `json` with every echoed secret in its strings replaced, or nil when none is there.
    private static func replacingEchoes(in json: JSONValue, _ search: EchoSearch, count: inout Int) -> JSONValue? {
        guard !search.isEmpty else { return nil }
        switch json {
        case .string(let text):
            let bytes = Array(text.utf8)
            let replaced = search.replace(in: bytes, count: &count)
            guard replaced != bytes else { return nil }
            return .string(String(decoding: replaced, as: UTF8.self))
        case .object, .array:
            return json.replacingChildren { _, child in replacingEchoes(in: child, search, count: &count) }
        default:
            return nil
        }
    }

    /// The most redacted values tried one by one when the placeholder does not fit the message's fields.
    static let largestTrialCount = 64

    /// The message's bytes from its redacted JSON. The placeholder is a string: a field that holds none (a
    /// number, an enum, bytes) is left out instead, as its default, found by trying each redacted value alone
    /// in the original JSON. Nil when the JSON cannot be written back at all.
    static func encode(
        _ redacted: JSONValue, original: JSONValue, schema: GRPCSchema, path: String, side: GRPCSchema.Side
    ) -> [UInt8]? {
        if let bytes = try? schema.message(from: redacted, path: path, side: side) { return bytes }
        var changed: [JSONPointer] = []
        collectChanges(redacted, original, at: JSONPointer(components: []), into: &changed)
        guard changed.count <= largestTrialCount,
            (try? schema.message(from: original, path: path, side: side)) != nil
        else {
            return try? schema.message(from: leavingOut(redacted, changedFrom: original), path: path, side: side)
        }
        var result = redacted
        // Last first, so that removing an array's element leaves the pointers before it valid.
        for pointer in changed.reversed() {
            let trial = original.replacing(pointer, with: redacted[pointer: pointer])
            guard (try? schema.message(from: trial, path: path, side: side)) == nil else { continue }
            let inArray = original[pointer: JSONPointer(components: pointer.components.dropLast())]?.arrayValue != nil
            // An array's element goes (a list holds no null); a member becomes null, its field's default.
            let replacement: JSONValue? = inArray ? Optional<JSONValue>.none : .some(.null)
            result = result.replacing(pointer, with: replacement)
        }
        return try? schema.message(from: result, path: path, side: side)
    }

    /// The pointers of the leaves where `redacted` differs from `original`, in document order.
    private static func collectChanges(
        _ redacted: JSONValue, _ original: JSONValue, at pointer: JSONPointer, into found: inout [JSONPointer]
    ) {
        guard redacted != original else { return }
        switch (redacted, original) {
        case (.object(let object), .object(let before)):
            for member in object.members {
                guard let old = before[member.key] else { continue }
                collectChanges(member.value, old, at: pointer + member.key, into: &found)
            }
        case (.array(let elements), .array(let before)) where elements.count == before.count:
            for (index, pair) in zip(elements, before).enumerated() {
                collectChanges(pair.0, pair.1, at: pointer + String(index), into: &found)
            }
        default:
            found.append(pointer)
        }
    }

    /// `redacted` with every value that differs from `original` left out: a member becomes null (the field's
    /// default), an array element is dropped. For fields that cannot hold the placeholder (numbers, enums, bytes).
    static func leavingOut(_ redacted: JSONValue, changedFrom original: JSONValue) -> JSONValue {
        switch (redacted, original) {
        case (.object(let object), .object(let before)):
            return .object(
                JSONObject(
                    object.members.map { member in
                        guard let old = before[member.key], old != member.value else {
                            return (member.key, member.value)
                        }
                        return (
                            member.key, isContainer(member.value) ? leavingOut(member.value, changedFrom: old) : .null
                        )
                    }))
        case (.array(let elements), .array(let before)) where elements.count == before.count:
            return .array(
                zip(elements, before).compactMap { element, old -> JSONValue? in
                    guard element != old else { return element }
                    guard isContainer(element) else { return Optional<JSONValue>.none }
                    return leavingOut(element, changedFrom: old)
                })
        default:
            return redacted
        }
    }

    private static func isContainer(_ value: JSONValue) -> Bool {
        switch value {
        case .object, .array: return true
        default: return false
        }
    }
}
