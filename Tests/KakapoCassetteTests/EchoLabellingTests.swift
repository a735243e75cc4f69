import KakapoCassette
import KakapoHTTP
import KakapoJSON
import Testing

/// Issue 42: how recording labels echoes of a request's secrets (`Redactor+Echoes.swift`). Names and shapes
/// go first, so a value that merely holds an echo is still redacted whole; only the sources recording
/// labelled are listed for replay to fill in.
@Suite("Echo labels")
struct EchoLabellingTests {
    static func interaction(_ request: HTTP.Request, contentType: String, body: String, headers: HTTP.Headers = [:])
        -> Interaction
    {
        var responseHeaders = headers
        responseHeaders.add(name: "Content-Type", value: contentType)
        return Interaction(
            request: request, response: HTTP.Response(status: 200, headers: responseHeaders, body: Array(body.utf8)),
            recordedAt: "2026-11-29T00:00:00.000Z", durationMilliseconds: 1)
    }

    static let keyed = HTTP.Request(method: .get, target: "/", headers: ["X-Api-Key": "kid_123456"])

    @Test("a secret-named value that holds an echo and more is redacted whole, in JSON, XML and a header")
    func mixedValues() {
        for (contentType, body) in [
            ("application/json", #"{"access_token":"kid_123456:NEWSECRET99"}"#),
            ("application/xml", "<r><SessionToken>kid_123456:NEWSECRET99</SessionToken></r>"),
        ] {
            let recorded = Self.interaction(
                Self.keyed, contentType: contentType, body: body,
                headers: ["X-Auth-Token": "kid_123456:NEWSECRET99"])
            let clean = Redactor().redact(recorded).interaction
            let written = String(decoding: clean.response.body, as: UTF8.self) + "\(clean.response.headers.fields)"
            #expect(!written.contains("NEWSECRET99") && !written.contains("kid_123456"), "\(written)")
            #expect(clean.echoSources.isEmpty, "nothing was labelled: \(clean.echoSources)")
        }
    }

    @Test("a value that is wholly an echo is labelled, and its source listed; a shorter echo inside text too")
    func wholeAndInside() throws {
        let recorded = Self.interaction(
            Self.keyed, contentType: "application/json", body: #"{"key":"kid_123456","note":"used kid_123456"}"#,
            headers: ["X-Api-Key": "kid_123456"])
        let clean = Redactor().redact(recorded).interaction
        let json = try JSONParser.parse(clean.response.body)
        #expect(json["key"] == "[REDACTED](request header x-api-key)")
        #expect(json["note"] == "used [REDACTED](request header x-api-key)")
        #expect(clean.response.headers["X-Api-Key"] == "[REDACTED](request header x-api-key)")
        #expect(clean.echoSources == ["header x-api-key"])
    }

    @Test("text an upstream sent that looks like a placeholder is kept, and not listed for replay")
    func literalPlaceholder() {
        let recorded = Self.interaction(
            HTTP.Request(method: .get, target: "/"), contentType: "text/plain",
            body: "see [REDACTED](request header authorization)")
        let clean = Redactor().redact(recorded).interaction
        #expect(clean.echoSources.isEmpty)
        #expect(Redactor.isPlaceholder("[REDACTED](request header x-api-key)"))
        #expect(Redactor.isPlaceholder("[REDACTED]"))
        #expect(!Redactor.isPlaceholder("[REDACTED](request header x):NEWSECRET)"))
        #expect(!Redactor.isPlaceholder("[REDACTED](request )"))
        #expect(!Redactor.isPlaceholder("[REDACTED]x"))
    }

    @Test("sources: names outside ASCII stay apart, a query value is given back as sent, one source per place")
    func sources() {
        let redactor = Redactor().adding(headers: [], queryParameters: ["名前", "住所"], keeping: [])
        let request = HTTP.Request(
            method: .get, target: "/?%E5%90%8D%E5%89%8D=a%26b%3D1&%E4%BD%8F%E6%89%80=second-value",
            headers: ["Authorization": "Bearer tok-123456"])
        let sources = redactor.echoSources(of: request)
        let names = sources.map(\.source)
        #expect(Set(names).count == names.count, "\(names)")
        #expect(names.contains("header authorization") && names.contains("header authorization credential"))
        let byName = Dictionary(sources.map { ($0.source, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(byName["query %E5%90%8D%E5%89%8D"] == "a%26b%3D1", "\(byName)")
        #expect(byName["query %E5%90%8D%E5%89%8D decoded"] == "a&b=1")
        #expect(byName["query %E4%BD%8F%E6%89%80"] == "second-value")
        #expect(byName["header authorization credential"] == "tok-123456")
    }
}
