import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Issue 42: no secret in any body Kakapo writes, and none broken by redaction. XML answers (STS, SOAP), binary
/// bodies and messages masked at their own length, the names and value shapes a probe still found in clear.
@Suite("Secrets in any body: XML, binary, more names and shapes")
struct SecretsInAnyBodyTests {
    let redactor = Redactor()

    static func exchange(
        request: HTTP.Request = HTTP.Request(method: .get, target: "/"), status: Int = 200,
        contentType: String, body: String
    ) -> Interaction {
        exchange(request: request, status: status, contentType: contentType, bytes: Array(body.utf8))
    }

    static func exchange(
        request: HTTP.Request = HTTP.Request(method: .get, target: "/"), status: Int = 200,
        contentType: String, bytes: [UInt8]
    ) -> Interaction {
        Interaction(
            request: request,
            response: HTTP.Response(status: status, headers: ["Content-Type": contentType], body: bytes),
            recordedAt: "2026-11-29T00:00:00.000Z", durationMilliseconds: 1)
    }

    static let stsAnswer = """
        <AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
          <AssumeRoleResult>
            <Credentials>
              <AccessKeyId>ASIAJEXAMPLEXEG2JICE</AccessKeyId>
              <SecretAccessKey>9drTJvcXLB89EXAMPLELB8923FB892xMFI</SecretAccessKey>
              <SessionToken>IQoJb3JpZ2luX2VjEXAMPLEtoken+with/slashes==</SessionToken>
              <Expiration>2026-11-29T12:00:00Z</Expiration>
            </Credentials>
            <AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/demo/session</Arn></AssumedRoleUser>
          </AssumeRoleResult>
        </AssumeRoleResponse>
        """

    @Test("an STS answer: the secret key and session token go, the document is otherwise byte for byte the same")
    func stsXML() throws {
        let clean = redactor.redact(Self.exchange(contentType: "text/xml", body: Self.stsAnswer))
        let text = String(decoding: clean.interaction.response.body, as: UTF8.self)
        #expect(!text.contains("9drTJvcXLB89EXAMPLELB8923FB892xMFI"), "\(text)")
        #expect(!text.contains("IQoJb3JpZ2luX2VjEXAMPLEtoken"), "\(text)")
        #expect(text.contains("<SecretAccessKey>[REDACTED]</SecretAccessKey>"), "\(text)")
        #expect(text.contains("<SessionToken>[REDACTED]</SessionToken>"), "\(text)")
        #expect(text.contains("<Expiration>2026-11-29T12:00:00Z</Expiration>"), "what describes a credential stays")
        #expect(text.contains("<Arn>arn:aws:sts::123456789012:assumed-role/demo/session</Arn>"))
        // Byte for byte elsewhere: the original with the three values replaced.
        let expected = Self.stsAnswer.replacingOccurrences(of: "9drTJvcXLB89EXAMPLELB8923FB892xMFI", with: "[REDACTED]")
            .replacingOccurrences(of: "IQoJb3JpZ2luX2VjEXAMPLEtoken+with/slashes==", with: "[REDACTED]")
            .replacingOccurrences(of: "ASIAJEXAMPLEXEG2JICE", with: "[REDACTED]")
        #expect(text == expected)
        #expect(clean.redacted.contains("SecretAccessKey") && clean.redacted.contains("SessionToken"))
        // Well-formed still (Foundation's parser, no entity resolution needed).
        #expect(XMLParser(data: Data(clean.interaction.response.body)).parse())
    }

    @Test("SOAP and other XML: prefixed elements, attributes, CDATA; nothing is resolved; descriptions stay")
    func soapAndAttributes() {
        let soap = """
            <?xml version="1.0"?>
            <!DOCTYPE x [ <!ENTITY leak SYSTEM "file:///etc/passwd"> ]>
            <soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:wsse="urn:wsse">
              <soap:Header><wsse:Security><wsse:UsernameToken>
                <wsse:Username>ada</wsse:Username>
                <wsse:Password Type="PasswordText">hunter2-long</wsse:Password>
              </wsse:UsernameToken></wsse:Security></soap:Header>
              <soap:Body><!-- <password>in a comment</password> -->
                <login user="ada" token="tk-0123456789abcdef" kind="basic"/>
                <client_secret><![CDATA[cdata-secret-42]]></client_secret>
                <password_hint>a pet's name</password_hint>
                <entity>&leak;</entity>
              </soap:Body>
            </soap:Envelope>
            """
        let clean = redactor.redact(Self.exchange(contentType: "application/soap+xml; charset=utf-8", body: soap))
        let text = String(decoding: clean.interaction.response.body, as: UTF8.self)
        for secret in ["hunter2-long", "tk-0123456789abcdef", "cdata-secret-42"] {
            #expect(!text.contains(secret), "\(secret) in \(text)")
        }
        #expect(text.contains(#"<wsse:Password Type="PasswordText">[REDACTED]</wsse:Password>"#), "\(text)")
        #expect(text.contains(#"token="[REDACTED]" kind="basic""#), "\(text)")
        #expect(text.contains("<![CDATA[[REDACTED]]]>"), "\(text)")
        #expect(text.contains("<wsse:Username>ada</wsse:Username>"), "\(text)")
        #expect(text.contains("<password_hint>a pet's name</password_hint>"), "\(text)")
        // Declarations and comments are skipped as they are: an entity reference stays a reference.
        #expect(
            text.contains(#"<!ENTITY leak SYSTEM "file:///etc/passwd">"#) && text.contains("<entity>&leak;</entity>"))
        #expect(text.contains("<!-- <password>in a comment</password> -->"))
    }

    @Test(
        "an XML request's secret is a whole placeholder, echoed in the answer it is replaced, and replay matches another"
    )
    func xmlRequestEchoAndMatch() throws {
        let body = "<login><user>ada</user><password>s3cret-pass-1</password></login>"
        let request = HTTP.Request(
            method: .post, target: "/soap", headers: ["Content-Type": "application/xml"], body: Array(body.utf8))
        let interaction = Self.exchange(
            request: request, contentType: "application/xml",
            body: "<result><echo>wrong password s3cret-pass-1</echo></result>")
        let clean = redactor.redact(interaction).interaction
        #expect(
            String(decoding: clean.request.body, as: UTF8.self)
                == "<login><user>ada</user><password>[REDACTED]</password></login>")
        #expect(
            String(decoding: clean.response.body, as: UTF8.self)
                == "<result><echo>wrong password [REDACTED]</echo></result>")
        // Replay: the same request with another password finds the recording; another user does not.
        var index = InteractionIndex(redactor: redactor)
        index.insert(clean, at: 0)
        let other = HTTP.Request(
            method: .post, target: "/soap", headers: ["Content-Type": "application/xml"],
            body: Array("<login><user>ada</user><password>other-pass-22</password></login>".utf8))
        #expect(index.candidates(for: other) == [0])
        let stranger = HTTP.Request(
            method: .post, target: "/soap", headers: ["Content-Type": "application/xml"],
            body: Array("<login><user>bob</user><password>other-pass-22</password></login>".utf8))
        #expect(index.candidates(for: stranger).isEmpty)
    }

    @Test("XML too deep, or a tag never closed, is not inspected; its credential shapes still go")
    func xmlNotInspected() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
        let deep =
            String(repeating: "<a>", count: 300) + "<password>plain-pass</password> \(jwt)"
            + String(repeating: "</a>", count: 300)
        let clean = redactor.redact(Self.exchange(contentType: "application/xml", body: deep)).interaction
        let text = String(decoding: clean.response.body, as: UTF8.self)
        #expect(!text.contains(jwt))
        let broken = "<x><token>abc-secret-1 \(jwt)</token><y attr=\"unterminated"
        let cut = String(
            decoding: redactor.redact(Self.exchange(contentType: "text/xml", body: broken)).interaction.response.body,
            as: UTF8.self)
        #expect(!cut.contains(jwt))
    }

    @Test("Stripe keys are found every time (the stem test no longer folds `_`), with the other known prefixes")
    func knownPrefixes() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        func random(_ count: Int) -> String {
            String((0..<(count - 1)).map { _ in alphabet.randomElement(using: &generator)! }) + "7"
        }
        for _ in 0..<200 {
            for prefix in ["sk_live_", "rk_live_"] {
                let key = prefix + random(24)
                let clean = redactor.redact(
                    Self.exchange(contentType: "application/json", body: #"{"note": "key \#(key) here"}"#))
                let text = String(decoding: clean.interaction.response.body, as: UTF8.self)
                #expect(!text.contains(key), "\(key)")
            }
        }
        for token in [
            "npm_" + random(36), "ya29.a0AfH6SM" + random(40), "sk-proj-" + random(40), "sk-ant-api03-" + random(40),
            "xoxe-1-" + random(30), "xapp-1-" + random(30), "glpat-" + random(20), "ghs_" + random(36),
            "AIza" + random(35),
        ] {
            let clean = redactor.redact(Self.exchange(contentType: "text/plain", body: "value: \(token) end"))
            #expect(
                String(decoding: clean.interaction.response.body, as: UTF8.self) == "value: [REDACTED] end", "\(token)")
        }
        // A slug made of words is no key.
        let slug = "sk-a-long-article-slug-about-keys-and-words"
        let kept = redactor.redact(Self.exchange(contentType: "text/plain", body: "see \(slug)"))
        #expect(String(decoding: kept.interaction.response.body, as: UTF8.self) == "see \(slug)")
    }

    @Test("SigV4 in a header of any name, URL passwords, PEM private keys, card numbers (Luhn-checked)")
    func newValueShapes() throws {
        let sigv4 =
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261129/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024"
        let request = HTTP.Request(method: .get, target: "/", headers: ["X-Original-Proof": sigv4])
        let clean = redactor.redact(Self.exchange(request: request, contentType: "text/plain", body: "ok"))
        #expect(clean.interaction.request.headers["X-Original-Proof"] == "AWS4-HMAC-SHA256 [REDACTED]")

        let text = """
            db: postgres://app:pg-Secret-77@db.internal:5432/app
            cache: redis://:r3dis-pass@cache:6379
            site: https://example.com/path@not-userinfo
            -----BEGIN RSA PRIVATE KEY-----
            MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun
            -----END RSA PRIVATE KEY-----
            card: 4242 4242 4242 4242, amex 378282246310005, not a card 4242 4242 4242 4241, time 1732861234567
            """
        let out = String(
            decoding: redactor.redact(Self.exchange(contentType: "text/plain", body: text)).interaction.response.body,
            as: UTF8.self)
        #expect(out.contains("postgres://app:[REDACTED]@db.internal:5432/app"), "\(out)")
        #expect(out.contains("redis://:[REDACTED]@cache:6379"), "\(out)")
        #expect(out.contains("https://example.com/path@not-userinfo"), "\(out)")
        #expect(!out.contains("MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"), "\(out)")
        #expect(out.contains("-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----"), "\(out)")
        #expect(out.contains("card: [REDACTED], amex [REDACTED], not a card 4242 4242 4242 4241"), "\(out)")
        #expect(out.contains("time 1732861234567"), "\(out)")
    }

    @Test("the names pass, pin, cvv, ssn and hmac, and members under a credential-named parent")
    func namesAndParents() throws {
        for name in ["pass", "pin", "cvv", "ssn", "hmac", "card_cvv", "userPin"] {
            #expect(redactor.isSecretQueryParameter(name), "\(name)")
            #expect(redactor.isSecretField(name), "\(name)")
        }
        for name in ["ping", "passed", "pinned", "mapping"] {
            #expect(!redactor.isSecretField(name), "\(name)")
        }
        let body = #"""
            {"auth": {"bearer": "plain-abcdef", "type": "bearer", "expires_in": 3600},
             "credentials": {"user": "ada", "pass": "hunter22", "host": "db"},
             "session": {"id": "s-1", "user": "ada"},
             "profile": {"name": "Ada"}}
            """#
        let clean = redactor.redact(Self.exchange(contentType: "application/json", body: body)).interaction
        let json = try JSONParser.parse(clean.response.body)
        #expect(json["auth"]?["bearer"] == "[REDACTED]")
        #expect(json["auth"]?["type"] == "bearer")
        #expect(json["auth"]?["expires_in"] == 3600)
        #expect(json["credentials"]?["user"] == "ada" && json["credentials"]?["host"] == "db")
        #expect(json["credentials"]?["pass"] == "[REDACTED]")
        #expect(json["profile"]?["name"] == "Ada")
    }

    /// An MQTT 3.1.1 CONNECT packet with `username` and a JWT as its password (MQTT over WebSockets).
    static func mqttConnect(password: String) -> [UInt8] {
        func string(_ text: String) -> [UInt8] {
            let bytes = Array(text.utf8)
            return [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
        }
        let variable: [UInt8] = string("MQTT") + [4, 0xC2, 0, 60]
        let payload = string("client-1") + string("ada") + string(password)
        let remaining = variable.count + payload.count
        var length: [UInt8] = []
        var value = remaining
        repeat {
            var byte = UInt8(value % 128)
            value /= 128
            if value > 0 { byte |= 0x80 }
            length.append(byte)
        } while value > 0
        return [0x10] + length + variable + payload
    }

    @Test("a JWT password in a binary MQTT CONNECT is masked at its own length: the packet still parses")
    func binaryMessageSameLength() throws {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEiLCJleHAiOjE3OTk5OTk5OTl9.c2lnbmF0dXJlLXZhbHVlLTEyMw"
        let packet = Self.mqttConnect(password: jwt)
        let interaction = Interaction(
            request: HTTP.Request(method: .get, target: "/mqtt", headers: ["Upgrade": "websocket"]),
            response: HTTP.Response(status: 101),
            recordedAt: "2026-11-29T00:00:00.000Z", durationMilliseconds: 1,
            webSocket: WebSocketConversation(messages: [
                WebSocketMessage(from: .client, offsetMilliseconds: 0, payload: .binary(packet)),
                WebSocketMessage(from: .server, offsetMilliseconds: 1, payload: .binary([0x20, 0x02, 0x00, 0x00])),
            ]))
        let clean = redactor.redact(interaction).interaction
        guard case .binary(let masked) = clean.webSocket?.messages.first?.payload else {
            Issue.record("no binary message")
            return
        }
        #expect(masked.count == packet.count)
        #expect(masked.firstRange(of: Array(jwt.utf8)) == nil)
        #expect(masked.firstRange(of: Array("[REDACTED*".utf8)) != nil)
        // Same framing: the masked packet is the one built with a same-length password.
        let placeholder = "[REDACTED" + String(repeating: "*", count: jwt.utf8.count - 10) + "]"
        #expect(masked == Self.mqttConnect(password: placeholder))
    }

    @Test("a protobuf-like body: a token after a printable length byte is still found, and masked in place")
    func binaryBodyPrintableLength() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXZhbHVlLWxvbmdlci10aGFuLWJlZm9yZS0xMjM0NTY3"
        // Field 2, length-delimited (0x12), then a length that reads as a letter.
        var body: [UInt8] = [0x08, 0x96, 0x01, 0x12, UInt8(jwt.utf8.count)] + Array(jwt.utf8)
        body += [0x1A, 0x03] + Array("abc".utf8)
        let clean = redactor.redact(
            Self.exchange(contentType: "application/x-protobuf", bytes: body)
        ).interaction
        #expect(clean.response.body.count == body.count)
        #expect(clean.response.body.firstRange(of: Array(jwt.utf8)) == nil)
        #expect(Array(clean.response.body.prefix(5)) == Array(body.prefix(5)))
        #expect(Array(clean.response.body.suffix(5)) == Array(body.suffix(5)))
    }

    @Test(
        "multipart parts are read like form fields: a credential-named part goes, a file's shapes are masked in place")
    func multipartParts() throws {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXZhbHVl"
        let body =
            "--XyZ\r\nContent-Disposition: form-data; name=\"client_secret\"\r\n\r\ncs-0123456789\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"a.bin\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n\u{01}\(jwt)\u{02}\r\n--XyZ--\r\n"
        let request = HTTP.Request(
            method: .post, target: "/upload", headers: ["Content-Type": "multipart/form-data; boundary=XyZ"],
            body: Array(body.utf8))
        let interaction = Self.exchange(
            request: request, contentType: "application/json", body: #"{"echo": "cs-0123456789"}"#)
        let clean = redactor.redact(interaction).interaction
        let text = String(decoding: clean.request.body, as: UTF8.self)
        #expect(text.contains("name=\"client_secret\"\r\n\r\n[REDACTED]\r\n"), "\(text)")
        #expect(text.contains("name=\"note\"\r\n\r\nhello\r\n"), "\(text)")
        #expect(!text.contains(jwt) && text.hasSuffix("--XyZ--\r\n"), "\(text)")
        #expect(clean.request.body.count == interaction.request.body.count - "cs-0123456789".count + 10)
        #expect(String(decoding: clean.response.body, as: UTF8.self) == #"{"echo": "[REDACTED]"}"#)
        // Replay: the same form with another secret finds the recording.
        var index = InteractionIndex(redactor: redactor)
        index.insert(clean, at: 0)
        let other = body.replacingOccurrences(of: "cs-0123456789", with: "cs-9999999999")
        var live = request
        live.body = Array(other.utf8)
        #expect(index.candidates(for: live) == [0])
    }

    @Test("a correlation id the client chose is no credential: MCP's progressToken stays, so progress can be matched")
    func correlationIds() throws {
        for name in ["progressToken", "idempotency_token", "Idempotency-Key", "X-Request-Id", "state", "nonce"] {
            #expect(!redactor.isSecretField(name) && !redactor.isSecretHeader(name), "\(name)")
        }
        let request = HTTP.Request(
            method: .post, target: "/mcp", headers: ["Content-Type": "application/json"],
            body: Array(
                #"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"pt-0042-abcdef"}}}"#
                    .utf8))
        let interaction = Self.exchange(
            request: request, contentType: "application/json",
            body:
                #"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"pt-0042-abcdef","progress":1}}"#
        )
        let clean = redactor.redact(interaction)
        #expect(clean.interaction == interaction, "\(clean.redacted)")
    }
}
