import Foundation
import KakapoCassette
import KakapoGRPC
import KakapoHTTP
import KakapoJSON
import KakapoTestSupport
import Testing

/// Credentials inside gRPC messages are redacted as a JSON body's are: by their values' shape without a
/// descriptor set (the wire format walked, lengths written anew), by their fields' names too with one (the
/// message redacted as JSON and written again from it); recordings still replay to the live call.
@Suite("Redaction of gRPC messages")
struct GRPCRedactionTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let jwt =
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"

    static func schema(_ name: String) throws -> GRPCSchema {
        try GRPCSchema(contentsOfFile: fixtures.appendingPathComponent(name).path)
    }

    /// A length-delimited field (strings, bytes, nested messages) with a one- or two-byte length.
    static func field(_ number: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let length: [UInt8] =
            payload.count < 0x80
            ? [UInt8(payload.count)] : [UInt8(payload.count & 0x7F) | 0x80, UInt8(payload.count >> 7)]
        return [number << 3 | 2] + length + payload
    }

    static func field(_ number: UInt8, _ text: String) -> [UInt8] { field(number, Array(text.utf8)) }

    static func call(
        path: String, request: [[UInt8]], reply: [[UInt8]], chunked: Bool = false, headers: HTTP.Headers = [:]
    ) -> Interaction {
        var requestHeaders: HTTP.Headers = ["content-type": "application/grpc", "te": "trailers"]
        for header in headers { requestHeaders.add(name: header.name, value: header.value) }
        let replies = reply.map { GRPCMessage(bytes: $0) }
        return Interaction(
            request: HTTP.Request(
                method: .post, target: path, headers: requestHeaders,
                body: request.map { GRPCMessage(bytes: $0) }.framed),
            response: HTTP.Response(
                status: 200, headers: ["content-type": "application/grpc"], body: replies.framed,
                trailers: ["grpc-status": "0"], version: "2"),
            recordedAt: "2026-11-24T14:00:00.000Z", durationMilliseconds: 10,
            chunks: chunked
                ? replies.enumerated().map {
                    ResponseChunk(offsetMilliseconds: Double($0.offset * 50), bytes: $0.element.framed)
                }
                : nil)
    }

    static func text(_ interaction: Interaction, schema: GRPCSchema? = nil) -> String {
        String(decoding: CassetteCodec.encodeFile(Cassette(interactions: [interaction]), schema: schema), as: UTF8.self)
    }

    static func messages(_ body: [UInt8]) throws -> [[UInt8]] { try GRPC.messages(in: body).map(\.bytes) }

    @Test("without a descriptor set a JWT in a string field is replaced whole in a request, cut out of an answer")
    func jwtWithoutSchema() throws {
        let interaction = Self.call(
            path: "/demo.Greeter/SayHello", request: [Self.field(1, Self.jwt) + [0x10, 3]],
            reply: [Self.field(1, "hello " + Self.jwt) + [0x10, 1]])
        let (clean, names) = Redactor().redact(interaction)
        #expect(try Self.messages(clean.request.body) == [Self.field(1, "[REDACTED]") + [0x10, 3]])
        #expect(try Self.messages(clean.response.body) == [Self.field(1, "hello [REDACTED]") + [0x10, 1]])
        #expect(names == ["JWT", "JWT"])
        let text = Self.text(clean)
        #expect(!text.contains("eyJ"), "\(text)")
        #expect(text.contains("\"grpc\""), "\(text)")
        // Credentials kept on request (--keep-credentials): nothing changes.
        #expect(Redactor.disabled.redact(interaction).interaction == interaction)
    }

    @Test("with the demo descriptor set the cassette shows the messages as JSON with the placeholder")
    func jwtWithSchema() throws {
        let schema = try Self.schema("demo.desc")
        let interaction = Self.call(
            path: "/demo.Greeter/StreamHellos", request: [Self.field(1, Self.jwt) + [0x10, 2]],
            reply: [Self.field(1, "hi " + Self.jwt) + [0x10, 1], Self.field(1, "plain") + [0x10, 2]], chunked: true)
        let (clean, names) = Redactor().redact(interaction, schema: schema)
        #expect(names.filter { $0 == "JWT" }.count == 2, "\(names)")
        let text = Self.text(clean, schema: schema)
        #expect(!text.contains("eyJ"), "\(text)")
        #expect(text.contains(#""name": "[REDACTED]""#), "\(text)")
        #expect(text.contains(#""message": "hi [REDACTED]""#), "\(text)")
        // Still one chunk per message, at the offsets they came at.
        #expect(clean.chunks?.map(\.offsetMilliseconds) == [0, 50])
        #expect(clean.chunks?.joinedBytes == clean.response.body)
        // Read back, the bytes replayed are the redacted ones.
        let read = try CassetteFile.decode(Array(text.utf8), file: "c.json", schema: schema).interactions[0]
        #expect(read.request.body == clean.request.body)
        #expect(read.response.body == clean.response.body)
    }

    /// `auth.LoginRequest` with credentials by name: a password, a nested api_key and secret number, a JWT note.
    static func login() -> [UInt8] {
        let credentials = Self.field(1, "k-live-0123456789") + [0x10, 42] + Self.field(3, "main")
        return Self.field(1, "ada") + Self.field(2, "hunter2-correct-horse") + Self.field(3, credentials)
            + Self.field(4, "ordinary note") + Self.field(4, Self.jwt)
    }

    @Test("with a descriptor set, credential-named fields are redacted at any depth and numbers left out")
    func namesWithSchema() throws {
        let schema = try Self.schema("auth.desc")
        let reply = Self.field(1, "opaque-access-token-value") + Self.field(2, "welcome ada")
        let interaction = Self.call(path: "/auth.Auth/Login", request: [Self.login()], reply: [reply])
        let (clean, names) = Redactor().redact(interaction, schema: schema)
        #expect(Set(names).isSuperset(of: ["password", "apiKey", "secretNumber", "JWT", "accessToken"]), "\(names)")
        let text = Self.text(clean, schema: schema)
        for secret in ["hunter2", "k-live", "\"42\"", "eyJ", "opaque-access"] {
            #expect(!text.contains(secret), "\(secret) in \(text)")
        }
        #expect(text.contains(#""password": "[REDACTED]""#), "\(text)")
        #expect(text.contains(#""apiKey": "[REDACTED]""#), "\(text)")
        #expect(text.contains(#""label": "main""#) && text.contains("ordinary note"), "\(text)")
        #expect(text.contains(#""accessToken": "[REDACTED]""#) && text.contains("welcome ada"), "\(text)")
        // Without the descriptor set names are unknown, but the method signs in: every text field goes.
        let (valuesOnly, _) = Redactor().redact(interaction)
        let kept = String(decoding: valuesOnly.request.body + valuesOnly.response.body, as: UTF8.self)
        #expect(!kept.contains("hunter2") && !kept.contains("eyJ") && !kept.contains("opaque-access"), "\(kept)")
        // A kept name (--no-redact password) stays.
        let keeping = Redactor().adding(headers: [], queryParameters: [], keeping: ["password"])
        let partial = Self.text(keeping.redact(interaction, schema: schema).interaction, schema: schema)
        #expect(partial.contains("hunter2-correct-horse") && partial.contains(#""apiKey": "[REDACTED]""#))
    }

    @Test("a bearer token in a nested message is found without a schema and the outer lengths are written anew")
    func nestedWithoutSchema() throws {
        let inner = Self.field(1, "Bearer abcd1234efgh5678ijkl") + [0x10, 7]
        let message = Self.field(2, Self.field(5, inner)) + Self.field(3, "after")
        let interaction = Self.call(path: "/x.Y/Z", request: [message], reply: [Self.field(1, "ok")])
        let (clean, names) = Redactor().redact(interaction)
        let expected = Self.field(2, Self.field(5, Self.field(1, "[REDACTED]") + [0x10, 7])) + Self.field(3, "after")
        #expect(try Self.messages(clean.request.body) == [expected])
        #expect(names == ["bearer token"])
        // An answer keeps the scheme, as a text body does.
        let answer = Self.call(path: "/x.Y/Z", request: [], reply: [message])
        let (cleanAnswer, _) = Redactor().redact(answer)
        #expect(
            try Self.messages(cleanAnswer.response.body) == [
                Self.field(2, Self.field(5, Self.field(1, "Bearer [REDACTED]") + [0x10, 7])) + Self.field(3, "after")
            ])
    }

    @Test("a token sent in a header and echoed in an answer's message is replaced there, frames intact")
    func echoInMessage() throws {
        let token = "s3cr3t-session-value-1234"
        let interaction = Self.call(
            path: "/demo.Greeter/SayHello", request: [Self.field(1, "ada")],
            reply: [Self.field(1, "you sent " + token)],
            headers: ["x-api-key": token])
        let (clean, names) = Redactor().redact(interaction)
        #expect(try Self.messages(clean.response.body) == [Self.field(1, "you sent [REDACTED]")])
        #expect(names.contains("echoed secret"), "\(names)")
    }

    @Test(
        "etcd's Authenticate without a descriptor set: the password and the token are redacted, and the recording still matches"
    )
    func authenticationWithoutSchema() throws {
        let password = "s3cret-pw"
        let token = "mKEWbfQuKCjqDNYN.12"
        // AuthenticateRequest {name = 1, password = 2}; AuthenticateResponse {header = 1 (varints), token = 2}.
        let header = Self.field(1, [0x08, 0x96, 0x01, 0x10, 0x02, 0x18, 0x07])
        let interaction = Self.call(
            path: "/etcdserverpb.Auth/Authenticate", request: [Self.field(1, "root") + Self.field(2, password)],
            reply: [header + Self.field(2, token)])
        let (clean, names) = Redactor().redact(interaction)
        let written = String(decoding: clean.request.body + clean.response.body, as: UTF8.self)
        #expect(!written.contains(password) && !written.contains(token), "\(written)")
        #expect(try Self.messages(clean.response.body) == [header + Self.field(2, "[REDACTED]")])
        #expect(names.contains("authentication field"), "\(names)")
        #expect(Redactor.isAuthenticationCall("/etcdserverpb.Auth/UserChangePassword"))
        #expect(Redactor.isAuthenticationCall("/acme.Users/SignIn"))
        #expect(!Redactor.isAuthenticationCall("/etcdserverpb.KV/Range"))
        #expect(!Redactor.isAuthenticationCall("/demo.Greeter/SayHello"))
        // Other calls keep their text: only shapes are redacted there.
        let range = Self.call(
            path: "/etcdserverpb.KV/Range", request: [Self.field(1, "foo")], reply: [Self.field(1, "bar")])
        #expect(Redactor().redact(range).interaction.response.body == range.response.body)
        // The live call (another password) finds the recording; a call with another structure does not.
        let directory = try Fixtures.temporaryDirectory()
        let session = CassetteSession(path: directory + "/etcd.json", cassette: Cassette(interactions: [clean]))
        var live = interaction.request
        live.body = [GRPCMessage(bytes: Self.field(1, "root") + Self.field(2, "another-pw"))].framed
        #expect(session.play(live) != nil)
        live.body = [GRPCMessage(bytes: Self.field(1, "root") + [0x18, 0x01])].framed
        #expect(session.play(live) == nil)
    }

    @Test("gzip-compressed messages are read, redacted and compressed again")
    func compressed() throws {
        let plain = Self.field(1, Self.jwt)
        let body = [GRPCMessage(compressed: true, bytes: ContentCoding.gzip.encode(plain))].framed
        var interaction = Self.call(path: "/demo.Greeter/SayHello", request: [], reply: [Self.field(1, "ok")])
        interaction.request.body = body
        interaction.request.headers.add(name: "grpc-encoding", value: "gzip")
        let (clean, _) = Redactor().redact(interaction)
        let message = try #require(try GRPC.messages(in: clean.request.body).first)
        #expect(message.compressed)
        #expect(ContentCoding.gzip.decode(message.bytes) == Self.field(1, "[REDACTED]"))
    }

    @Test("a recording redacted this way still matches the live call, with and without a descriptor set")
    func replayMatches() throws {
        for schema in [nil, try Self.schema("demo.desc")] {
            let directory = try Fixtures.temporaryDirectory()
            var matching = MatchOptions()
            matching.grpcSchema = schema
            let interaction = Self.call(
                path: "/demo.Greeter/SayHello", request: [Self.field(1, Self.jwt) + [0x10, 3]],
                reply: [Self.field(1, "hello " + Self.jwt)])
            // Recording counts what it redacted, by the session's descriptor set.
            let recorder = CassetteSession(
                path: directory + "/r.json", cassette: Cassette(interactions: []), matching: matching)
            recorder.record(interaction, replacing: false)
            #expect(recorder.redactionCounts["JWT"] == 2, "\(recorder.redactionCounts)")
            // Replay of the recording: the live request, with its real token, finds it.
            let clean = Redactor().redact(interaction, schema: schema).interaction
            #expect(!String(decoding: clean.request.body + clean.response.body, as: UTF8.self).contains("eyJ"))
            let session = CassetteSession(
                path: directory + "/c.json", cassette: Cassette(interactions: [clean]), matching: matching)
            #expect(session.play(interaction.request) != nil, "schema: \(schema != nil)")
            var other = interaction.request
            other.body = [GRPCMessage(bytes: Self.field(1, Self.jwt) + [0x10, 4])].framed
            #expect(session.play(other) == nil, "schema: \(schema != nil)")
        }
    }

    @Test("hostile message bytes never trap and are searched as they are")
    func hostileBytes() {
        var random = SeededRandom(seed: 33)
        let samples: [[UInt8]] =
            [
                [0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F],  // a length past the end
                [0x0A] + Array(repeating: 0xFF, count: 12),  // a varint too long
                [0x1B, 0x0A, 0x01, 0x41],  // a group never ended
                [0x07, 0x00],  // wire type 7
                Array(repeating: 0x0A, count: 4096),  // nested as deep as the bytes go
                (0..<90).reduce(Self.field(1, Self.jwt)) { inner, _ in Self.field(1, inner) },  // 90 levels
            ]
            + (0..<300).map { _ in (0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
        for bytes in samples {
            // After a space: a JWT glued to the letter before it is no JWT, in a text body too.
            let interaction = Self.call(
                path: "/demo.Greeter/SayHello", request: [bytes, bytes + Array(" \(Self.jwt)".utf8)], reply: [bytes])
            let (clean, _) = Redactor().redact(interaction, schema: try? Self.schema("demo.desc"))
            let leaked = String(decoding: clean.request.body, as: UTF8.self).contains("eyJ")
            #expect(!leaked, "\(clean.request.body.map { String($0, radix: 16) })")
            #expect((try? GRPC.messages(in: clean.request.body))?.count == 2)
        }
        // Deeper than Protocol Buffers' parsers read (100 levels): walked no further, never a trap.
        let deep = (0..<5000).reduce(Self.field(1, "x")) { inner, _ in Self.field(1, inner) }
        let (clean, _) = Redactor().redact(
            Self.call(path: "/x.Y/Z", request: [deep + Self.field(2, Self.jwt)], reply: [deep]))
        #expect(!String(decoding: clean.request.body, as: UTF8.self).contains("eyJ"))
    }
}
