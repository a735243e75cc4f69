import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON
import KakapoTestSupport
import Testing

/// Issue 42: a property over generated bodies. Each case plants one secret, by its name or by its shape, in
/// a JSON, XML, form, multipart, text or binary body, plain or gzip, deflate, br or zstd, on the request or
/// the response side; recording (the redactor) must leave no trace of it in anything it writes, and
/// `cassette lint` (the scanner, which reads with the same rules) must name it or list the body as one it
/// could not read. The generator is seeded, so a failure names a case that comes back.
@Suite("Planted secrets: none survives recording, lint names each")
struct PlantedSecretsPropertyTests {
    /// Draws from a seeded generator (`SeededRandom`): the same seed gives the same cases on every machine.
    struct Generator {
        var random: SeededRandom

        init(seed: UInt64) { random = SeededRandom(seed: seed) }

        mutating func next() -> UInt64 { random.next() }

        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

        mutating func pick<T>(_ choices: [T]) -> T { choices[below(choices.count)] }

        /// `count` characters of `alphabet`, at least one of them a digit when the alphabet has digits.
        mutating func string(_ count: Int, from alphabet: String) -> String {
            let characters = Array(alphabet)
            var text = String((0..<count).map { _ in characters[below(characters.count)] })
            if alphabet.contains("7") { text.replaceSubrange(text.startIndex...text.startIndex, with: "7") }
            return text
        }
    }

    static let alphanumeric = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    static let base64URL = alphanumeric + "-_"

    /// A secret that is one by its shape, whatever name (or none) it sits under.
    static func shaped(_ random: inout Generator) -> String {
        switch random.below(9) {
        case 0:
            // A JWT: header, payload and signature in base64url.
            return "eyJhbGciOiJIUzI1NiJ9.eyJ" + random.string(30, from: base64URL) + "."
                + random.string(43, from: base64URL)
        case 1: return "AKIA" + random.string(16, from: "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        case 2: return random.pick(["ghp_", "gho_", "ghs_"]) + random.string(36, from: alphanumeric)
        case 3: return random.pick(["sk_live_", "rk_live_"]) + random.string(24, from: alphanumeric)
        case 4: return "xoxb-" + random.string(12, from: "0123456789") + "-" + random.string(24, from: alphanumeric)
        case 5: return "npm_" + random.string(36, from: alphanumeric)
        case 6: return "glpat-" + random.string(20, from: alphanumeric)
        case 7: return "ya29." + random.string(40, from: base64URL)
        default: return "sk-proj-" + random.string(40, from: alphanumeric)
        }
    }

    /// A random value under a credential's name: nothing in its shape gives it away.
    static func plain(_ random: inout Generator) -> String { random.string(12 + random.below(20), from: alphanumeric) }

    static let credentialNames = [
        "password", "client_secret", "access_token", "refresh_token", "api_key", "apiKey", "X-Auth-Token", "passwd",
        "private_token", "sessionToken", "SecretAccessKey", "pin", "cvv", "hmac", "signature",
    ]
    static let ordinaryNames = ["name", "city", "page", "color", "title", "count"]

    enum Kind: CaseIterable {
        case json, xml, form, multipart, text, binary
    }

    /// One generated case: a body holding `secret`, planted under a credential's name or by its shape.
    struct Case: CustomStringConvertible {
        let kind: Kind
        let coding: ContentCoding?
        let onRequest: Bool
        let secret: String
        let contentType: String
        let body: [UInt8]

        var description: String {
            "\(kind) \(coding?.rawValue ?? "identity") on the \(onRequest ? "request" : "response"): \(secret)"
        }
    }

    static func generate(_ random: inout Generator) -> Case {
        let kind = random.pick(Kind.allCases)
        // Binary and text bodies are read by shapes only: a name means nothing there.
        let byName = kind != .binary && kind != .text && random.below(2) == 0
        let secret = byName ? plain(&random) : shaped(&random)
        let name = byName ? random.pick(credentialNames) : random.pick(ordinaryNames)
        let other = random.pick(ordinaryNames)
        let filler = random.string(8, from: alphanumeric)
        var contentType: String
        var content: [UInt8]
        switch kind {
        case .json:
            contentType = "application/json"
            let member = "\"\(name)\":\"\(secret)\""
            switch random.below(3) {
            case 0: content = Array(#"{\#(member),"\#(other)":"\#(filler)"}"#.utf8)
            case 1: content = Array(#"{"\#(other)":"\#(filler)","data":{"items":[{"n":1},{\#(member)}]}}"#.utf8)
            default:
                // Deeper than the parser goes (512 levels): read as text, members by their names all the same.
                let depth = 600
                content = Array(
                    (String(repeating: #"{"a":"#, count: depth) + "{\(member)}" + String(repeating: "}", count: depth))
                        .utf8)
            }
        case .xml:
            contentType = random.pick(["application/xml", "text/xml", "application/soap+xml"])
            let element =
                random.below(2) == 0
                ? "<ns:\(name)>\(secret)</ns:\(name)>" : "<entry \(name)=\"\(secret)\" kind=\"x\"/>"
            content = Array(
                "<?xml version=\"1.0\"?><ns:root xmlns:ns=\"urn:x\"><\(other)>\(filler)</\(other)>\(element)</ns:root>"
                    .utf8)
        case .form:
            contentType = "application/x-www-form-urlencoded"
            content = Array("\(other)=\(filler)&\(name)=\(secret)&z=1".utf8)
        case .multipart:
            contentType = "multipart/form-data; boundary=BOUNDARY42"
            content = Array(
                ("--BOUNDARY42\r\nContent-Disposition: form-data; name=\"\(other)\"\r\n\r\n\(filler)\r\n"
                    + "--BOUNDARY42\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(secret)\r\n"
                    + "--BOUNDARY42--\r\n").utf8)
        case .text:
            contentType = "text/plain"
            content = Array("log line \(filler): using \(secret) for the call\n".utf8)
        case .binary:
            // A framed message (MQTT-like): a length-prefixed string amid bytes no one reads as text.
            contentType = "application/octet-stream"
            let noise = (0..<(8 + random.below(24))).map { _ in UInt8(random.below(32)) }
            let secretBytes = Array(secret.utf8)
            content =
                [0x10, UInt8(truncatingIfNeeded: secretBytes.count + 2), 0x00, UInt8(secretBytes.count)]
                + secretBytes + noise
        }
        let coding: ContentCoding? = random.pick([nil, .gzip, .deflate, .br, .zstd])
        return Case(
            kind: kind, coding: coding, onRequest: random.below(2) == 0, secret: secret, contentType: contentType,
            body: coding?.encode(content) ?? content)
    }

    static func interaction(_ planted: Case) -> Interaction {
        var headers = HTTP.Headers([("Content-Type", planted.contentType)])
        if let coding = planted.coding { headers.add(name: "Content-Encoding", value: coding.rawValue) }
        let plainHeaders = HTTP.Headers([("Content-Type", "application/json")])
        let empty = Array(#"{"ok":true}"#.utf8)
        return Interaction(
            request: HTTP.Request(
                method: .post, target: "/upload", headers: planted.onRequest ? headers : plainHeaders,
                body: planted.onRequest ? planted.body : empty),
            response: HTTP.Response(
                status: 200, headers: planted.onRequest ? plainHeaders : headers,
                body: planted.onRequest ? empty : planted.body),
            recordedAt: "2026-11-29T00:00:00.000Z", durationMilliseconds: 1)
    }

    /// Every byte recording would write for `interaction`: its URL, headers and bodies, decoded as the file
    /// stores them.
    static func written(_ interaction: Interaction) -> [UInt8] {
        var bytes = Array(interaction.request.target.utf8)
        for field in interaction.request.headers.fields + interaction.response.headers.fields {
            bytes += Array("\(field.name): \(field.value)\n".utf8)
        }
        bytes += ContentCoding.decoding(interaction.request.body, headers: interaction.request.headers).content
        bytes += ContentCoding.decoding(interaction.response.body, headers: interaction.response.headers).content
        bytes += interaction.request.body + interaction.response.body
        return bytes
    }

    @Test(
        "600 generated bodies: no planted secret is written, and lint names or lists every one", arguments: [1, 2, 3])
    func plantedSecrets(seed: UInt64) throws {
        var random = Generator(seed: seed)
        let redactor = Redactor()
        let scanner = CredentialScanner(redactor: redactor)
        var survived: [String] = []
        var unnamed: [String] = []
        for _ in 0..<200 {
            let planted = Self.generate(&random)
            let interaction = Self.interaction(planted)
            let (clean, _) = redactor.redact(interaction)
            let secret = Array(planted.secret.utf8)
            if Redactor.firstOccurrence(of: secret, in: Self.written(clean), from: 0) != nil {
                survived.append(planted.description)
            }
            let cassette = Cassette(interactions: [interaction])
            if scanner.scan(cassette).isEmpty && scanner.uninspected(cassette).isEmpty {
                unnamed.append(planted.description)
            }
            // The cassette as written reads back, and lint finds nothing left in it.
            let file = CassetteCodec.encodeFile(Cassette(interactions: [clean]))
            let reread = try CassetteFile.decode(file, file: "generated.json")
            #expect(scanner.scan(reread).isEmpty, "\(planted)")
        }
        #expect(survived.isEmpty, "written in clear: \(survived)")
        #expect(unnamed.isEmpty, "lint said nothing about: \(unnamed)")
    }
}
