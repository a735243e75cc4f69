import KakapoCassette
import KakapoHTTP
import KakapoJSON
import Testing

/// The default redaction rules by the shape of names and values (issue 25): what they catch, and the
/// ordinary names and values they must leave alone so replays keep working.
@Suite("Trust: credentials by the shape of names and values")
struct TrustSecretsNamesTests {
    let redactor = Redactor()

    @Test("credential names are found in any spelling: headers, query and form, JSON members")
    func credentialNames() {
        for header in [
            "X-API-Token", "Private-Token", "X-Goog-Api-Key", "X-Auth-Key", "Api-Token", "X-Session-Token",
            "Authorization", "X-CSRF-Token", "Ocp-Apim-Subscription-Key", "X-Amz-Security-Token", "apiKey", "APIKey",
        ] {
            #expect(redactor.isSecretHeader(header), "\(header)")
        }
        for query in [
            "X-Amz-Signature", "X-Amz-Credential", "refresh_token", "code", "auth", "id_token", "session", "passwd",
            "private_token", "key", "client_assertion", "sig", "clientSecret", "access-token", "session_id",
        ] {
            #expect(redactor.isSecretQueryParameter(query), "\(query)")
        }
        for member in ["password", "token", "apiKey", "access_token", "session", "userPassword", "secret_key"] {
            #expect(redactor.isSecretField(member), "\(member)")
        }
    }

    @Test("ordinary names are not credentials: key as a word of its own, descriptions, pagination, counts")
    func ordinaryNames() {
        for header in [
            "Content-Length", "Content-Type", "Cache-Key", "Keep-Alive", "Sec-WebSocket-Key", "X-Request-Id", "Accept",
            "Access-Control-Allow-Credentials", "WWW-Authenticate",
        ] {
            #expect(!redactor.isSecretHeader(header), "\(header)")
        }
        for query in ["page", "cursor", "page_token", "nextPageToken", "sort", "keyboard", "monkey", "key_count"] {
            #expect(!redactor.isSecretQueryParameter(query), "\(query)")
        }
        for member in [
            "token_type", "expires_in", "author", "max_tokens", "prompt_tokens", "key", "code", "primary_key",
            "password_hint", "oauth_signature_method", "client_assertion_type", "NextToken", "session_count",
            "sessionId",
        ] {
            #expect(!redactor.isSecretField(member), "\(member)")
        }
    }

    @Test("values by shape: a JWT anywhere, a bearer token, an AWS key id, a presigned URL's signature")
    func valuesByShape() throws {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
        let body =
            #"{"note": "see \#(jwt)", "link": "https://s3/x?X-Amz-Signature=abcdef0123456789&X-Amz-Date=20260101", "owner": "AKIAIOSFODNN7EXAMPLE", "words": "Bearer authentication and Basic information"}"#
        let interaction = Interaction(
            request: HTTP.Request(method: .get, target: "/a?next=\(jwt)&page=2"),
            response: HTTP.Response(
                status: 200, headers: ["Content-Type": "application/json", "X-Trace": "Bearer abc.def-123456"],
                body: Array(body.utf8)),
            recordedAt: "2026-11-22T00:00:00.000Z", durationMilliseconds: 1)
        let clean = redactor.redact(interaction).interaction
        #expect(
            clean.request.target == "/a?next=[REDACTED]&page=2", "a request value goes whole, so matching ignores it")
        #expect(clean.response.headers["X-Trace"] == "Bearer [REDACTED]")
        let json = try JSONParser.parse(clean.response.body)
        // In a response only the secret goes; found by its shape before echoes are looked for, it keeps the
        // plain placeholder (an echo is labelled only when no name or shape took it first).
        #expect(json["note"] == "see [REDACTED]", "in a response only the secret goes")
        #expect(json["link"] == "https://s3/x?X-Amz-Signature=[REDACTED]&X-Amz-Date=20260101")
        #expect(json["owner"] == "[REDACTED]")
        #expect(json["words"] == "Bearer authentication and Basic information", "prose is not a credential")
    }

    @Test("a form secret echoed in the response body is replaced there too; --no-redact keeps a name")
    func echoesAndKept() {
        let interaction = Interaction(
            request: HTTP.Request(
                method: .post, target: "/register", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Array("user=ada&passwd=s3cret-value".utf8)),
            response: HTTP.Response(
                status: 400, headers: ["Content-Type": "text/html"],
                body: Array("<p>s3cret-value is too weak</p>".utf8)),
            recordedAt: "2026-11-22T00:00:00.000Z", durationMilliseconds: 1)
        let clean = redactor.redact(interaction).interaction
        #expect(String(decoding: clean.request.body, as: UTF8.self) == "user=ada&passwd=[REDACTED]")
        #expect(
            String(decoding: clean.response.body, as: UTF8.self) == "<p>[REDACTED](request form passwd) is too weak</p>"
        )
        let keeping = redactor.adding(headers: [], queryParameters: [], keeping: ["passwd"])
        #expect(keeping.redact(interaction).interaction == interaction)
    }
}
