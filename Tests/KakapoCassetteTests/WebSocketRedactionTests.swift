import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoTestSupport
import Testing

/// Redaction of WebSocket conversations (issue 31): every message is redacted as a body is, echoes of the
/// handshake's secrets too, within the bounds a cassette reads, in time linear in the messages.
@Suite("WebSocket conversations are redacted")
struct WebSocketRedactionTests {
    static let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJlLXZhbHVl"

    static func upgrade(
        target: String = "/chat?token=q-secret-0042", messages: [WebSocketMessage], close: WebSocketClose? = nil,
        subprotocol: String? = nil
    ) -> Interaction {
        Interaction(
            request: HTTP.Request(
                method: .get, target: target,
                headers: HTTP.Headers([
                    ("Host", "ws.test"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
                    ("Authorization", "Bearer h-secret-9f8e7d"),
                ])),
            response: HTTP.Response(status: 101, headers: ["Upgrade": "websocket", "Connection": "Upgrade"]),
            recordedAt: "2026-11-24T08:00:00.000Z", durationMilliseconds: 2,
            webSocket: WebSocketConversation(subprotocol: subprotocol, messages: messages, close: close))
    }

    static func text(_ from: WebSocketMessage.Sender, _ offset: Double, _ text: String) -> WebSocketMessage {
        WebSocketMessage(from: from, offsetMilliseconds: offset, payload: .text(text))
    }

    static func texts(_ interaction: Interaction) -> [String] {
        (interaction.webSocket?.messages ?? []).map { message in
            switch message.payload {
            case .text(let text): text
            case .binary(let bytes): "binary " + bytes.map(String.init).joined(separator: ",")
            }
        }
    }

    @Test(
        "an auth message's token, JWTs and bearer tokens in messages, and the handshake's secrets echoed in text and binary messages are redacted and counted"
    )
    func messages() throws {
        let echo = Array("id=q-secret-0042;".utf8)
        let interaction = Self.upgrade(messages: [
            Self.text(.client, 1, #"{"type":"auth","token":"m-secret-5566","password":"hunter2222"}"#),
            Self.text(.server, 5, #"{"type":"ready","user":"ada","note":"welcome back m-secret-5566"}"#),
            Self.text(.server, 6, "session " + Self.jwt),
            Self.text(.server, 7, "you sent q-secret-0042 and Bearer h-secret-9f8e7d"),
            WebSocketMessage(from: .server, offsetMilliseconds: 8, payload: .binary([0xFF] + echo + [0x00])),
            Self.text(.client, 9, #"{"type":"ping","n":1}"#),
            Self.text(.server, 10, "hello"),
        ])
        let (clean, redacted) = Redactor().redact(interaction)
        let texts = Self.texts(clean)
        #expect(texts[0] == #"{"type":"auth","token":"[REDACTED]","password":"[REDACTED]"}"#)
        // The client's token, echoed by the server, is found too.
        #expect(texts[1] == #"{"type":"ready","user":"ada","note":"welcome back [REDACTED]"}"#)
        #expect(texts[2] == "session [REDACTED]")
        #expect(!texts[3].contains("secret"), "\(texts[3])")
        #expect(
            texts[4]
                == "binary "
                + ([0xFF] + Array("id=[REDACTED***];".utf8) + [0x00]).map(String.init).joined(separator: ","),
            "a binary message's secret is masked at its own length (issue 42)")
        #expect(texts[5] == #"{"type":"ping","n":1}"#)
        #expect(texts[6] == "hello")
        #expect(clean.request.target == "/chat?token=[REDACTED]")
        #expect(redacted.contains("token") && redacted.contains("password") && redacted.contains("JWT"), "\(redacted)")
        // The bearer token is found by its shape first; the other three values are echoes.
        #expect(redacted.filter { $0 == "echoed secret" }.count == 3, "\(redacted)")
        // Nothing of a secret is left anywhere in the file.
        let file = String(decoding: CassetteCodec.encodeFile(Cassette(interactions: [clean])), as: UTF8.self)
        for secret in ["m-secret", "q-secret", "h-secret", "hunter2222", Self.jwt] {
            #expect(!file.contains(secret), "\(secret) in \(file)")
        }
        #expect(try CassetteFile.decode(Array(file.utf8), file: "ws.json").interactions == [clean])
    }

    @Test(
        "a client's secret becomes the placeholder whole (replay's wildcard); its text redacted in place matches a live message with another token"
    )
    func clientMessagesStayMatchable() {
        let interaction = Self.upgrade(messages: [
            Self.text(.client, 1, #"{"op":"login","access_token":"Bearer abc123def456"}"#),
            Self.text(.client, 2, "LOGIN Bearer abc123def456 now"),
            Self.text(.server, 3, #"{"op":"ok","access":"Bearer zzz999yyy888"}"#),
        ])
        let redactor = Redactor()
        let texts = Self.texts(redactor.redact(interaction).interaction)
        #expect(texts[0] == #"{"op":"login","access_token":"[REDACTED]"}"#)
        #expect(texts[1] == "LOGIN Bearer [REDACTED] now")
        // A server's text keeps all but the secret.
        #expect(texts[2] == #"{"op":"ok","access":"Bearer [REDACTED]"}"#)
        let live = HTTP.Request(
            method: .get, target: "/chat?token=q-other-7777", headers: ["Authorization": "Bearer h-other-1234"])
        #expect(
            redactor.clientTextForMatching("LOGIN Bearer other999live now", recorded: texts[1], handshake: live)
                == texts[1])
        // An echo of the live handshake's token is cut as the recording's was.
        #expect(
            redactor.clientTextForMatching("resume q-other-7777", recorded: "resume [REDACTED]", handshake: live)
                == "resume [REDACTED]")
        #expect(redactor.clientTextForMatching("plain", recorded: "plain", handshake: live) == "plain")
        #expect(
            redactor.clientTextForMatching("LOGIN Bearer other999live now", recorded: "LOGIN x", handshake: live)
                == "LOGIN Bearer other999live now", "no placeholder recorded: compared as it is")
    }

    @Test("a secret in the close reason or the subprotocol is redacted, and the reason stays within a close frame")
    func closeAndSubprotocol() throws {
        let short = "kicked: token q-secret-0042 expired"
        let interaction = Self.upgrade(
            messages: [], close: WebSocketClose(from: .server, code: 4001, reason: short, offsetMilliseconds: 3),
            subprotocol: "auth." + Self.jwt)
        var (clean, _) = Redactor().redact(interaction)
        #expect(clean.webSocket?.close?.reason == "kicked: token [REDACTED] expired")
        #expect(clean.webSocket?.subprotocol == "auth.[REDACTED]")
        // A secret of 6 bytes grows into the 10 of the placeholder: the reason is cut to the 123 bytes a frame holds.
        var short6 = Self.upgrade(target: "/chat?token=abc123", messages: [])
        short6.webSocket?.close = WebSocketClose(
            from: .client, code: 1000, reason: String(repeating: "r", count: 117) + "abc123")
        (clean, _) = Redactor().redact(short6)
        let cleaned = try #require(clean.webSocket?.close?.reason)
        #expect(cleaned.utf8.count == WebSocketClose.largestReasonBytes)
        #expect(cleaned == String(repeating: "r", count: 117) + "[REDAC")
        // The cassette stays loadable.
        let bytes = CassetteCodec.encodeFile(Cassette(interactions: [clean]))
        #expect(try CassetteFile.decode(bytes, file: "close.json").interactions == [clean])
    }

    @Test("a recording session writes the conversation redacted and reports what it redacted")
    func recordedThroughTheSession() throws {
        let path = try Fixtures.temporaryDirectory() + "/ws.json"
        let session = CassetteSession(path: path, cassette: Cassette(interactions: []))
        session.record(
            Self.upgrade(messages: [Self.text(.client, 1, #"{"type":"auth","api_key":"k-secret-1234"}"#)]),
            replacing: false)
        try session.close()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!text.contains("k-secret-1234"), "\(text)")
        #expect(text.contains(#"\"api_key\":\"[REDACTED]\""#), "\(text)")
        #expect(session.redactionCounts["api_key"] == 1, "the shutdown summary counts it")
    }

    @Test("redaction turned off keeps every message as it was")
    func disabled() {
        let interaction = Self.upgrade(messages: [
            Self.text(.client, 1, #"{"token":"m-secret-5566"}"#), Self.text(.server, 2, "q-secret-0042"),
        ])
        let (clean, redacted) = Redactor.disabled.redact(interaction)
        #expect(clean.webSocket == interaction.webSocket)
        #expect(redacted.isEmpty)
    }

    @Test("100,000 messages, each with a new token, are redacted in time linear in their number")
    func linear() {
        func conversation(_ count: Int) -> Interaction {
            var messages: [WebSocketMessage] = []
            messages.reserveCapacity(count)
            for index in 0..<count {
                messages.append(
                    index % 2 == 0
                        ? Self.text(.client, Double(index), #"{"type":"auth","token":"t-\#(index)-secret"}"#)
                        : Self.text(
                            .server, Double(index),
                            #"{"type":"tick","price":\#(index),"echo":"t-\#(index - 1)-secret"}"#))
            }
            return Self.upgrade(messages: messages)
        }
        let redactor = Redactor()
        func seconds(_ interaction: Interaction) -> (Double, Interaction) {
            let start = Date()
            let (clean, _) = redactor.redact(interaction)
            return (Date().timeIntervalSince(start), clean)
        }
        // The faster of two runs each: a load spike beside the test (CI runs eight at once) slows one run, not
        // both.
        let smallConversation = conversation(20_000)
        let largeConversation = conversation(100_000)
        let small = min(seconds(smallConversation).0, seconds(smallConversation).0)
        let (firstLarge, clean) = seconds(largeConversation)
        let large = min(firstLarge, seconds(largeConversation).0)
        let texts = Self.texts(clean)
        #expect(texts[0] == #"{"type":"auth","token":"[REDACTED]"}"#)
        #expect(!texts.contains { $0.contains(#""token":"t-"#) })
        // Five times the messages: about five times the time; quadratic work would take twenty-five.
        #expect(large < small * 15 + 1, "20,000 messages: \(small) s, 100,000: \(large) s")
    }
}
