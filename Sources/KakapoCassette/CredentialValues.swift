import Foundation

/// Finds credentials by the shape of their values, wherever they appear in text (header values, query
/// values, JSON strings, text bodies), whatever the name around them:
/// - JWTs: three base64url segments, the first starting `eyJ` (a JSON object's `{"`);
/// - AWS access key ids (`AKIA...`, `ASIA...`, 20 characters);
/// - `Bearer TOKEN` (the token: at least 8 characters with a digit or a symbol, so `Bearer
///   authentication` in prose is not one) and `Basic BASE64` that decodes to `user:password`;
/// - credential-named members of JSON that is not parsed (`"access_token": "..."` in a stream's chunk);
/// - credential-named parameters inside URLs in text (`?X-Amz-Signature=...`, `&access_token=...`,
///   `?code=...` in a `Location`), named by the rules of `CredentialNames`;
/// - well-known token prefixes: GitHub (`ghp_`, `github_pat_`), Slack (`xoxb-`), Stripe (`sk_live_`)
///   and Google API keys (`AIza`).
///
/// Only the secret itself is a span: `Bearer [REDACTED]` keeps its scheme, a URL keeps its path.
enum CredentialValues {
    /// A secret's bytes and what kind it is (for the redaction summary).
    struct Span {
        let range: Range<Int>
        let kind: String
    }

    /// Every secret-shaped span of `bytes`, in order, not overlapping.
    static func spans(in bytes: [UInt8]) -> [Span] {
        var spans: [Span] = []
        var index = 0
        while index < bytes.count {
            if let span = span(at: index, in: bytes), span.range.upperBound > span.range.lowerBound {
                if !bytes[span.range].elementsEqual(Redactor.placeholder.utf8) { spans.append(span) }
                index = span.range.upperBound
            } else {
                index += 1
            }
        }
        return spans
    }

    /// `bytes` with every span replaced by the placeholder, or nil when there is none.
    static func redacting(_ bytes: [UInt8], noting kinds: inout [String]) -> [UInt8]? {
        let found = spans(in: bytes)
        guard !found.isEmpty else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var start = 0
        for span in found {
            output += bytes[start..<span.range.lowerBound]
            output += Redactor.placeholder.utf8
            start = span.range.upperBound
            kinds.append(span.kind)
        }
        output += bytes[start...]
        return output
    }

    /// The text with every span replaced, or the text itself.
    static func redacting(_ text: String, noting kinds: inout [String]) -> String {
        guard mightHoldCredential(text), let rewritten = redacting(Array(text.utf8), noting: &kinds) else {
            return text
        }
        return String(decoding: rewritten, as: UTF8.self)
    }

    /// The secrets themselves, for finding them echoed elsewhere.
    static func values(in text: String) -> [String] {
        guard mightHoldCredential(text) else { return [] }
        let bytes = Array(text.utf8)
        return spans(in: bytes).map { String(decoding: bytes[$0.range], as: UTF8.self) }
    }

    private static func span(at index: Int, in bytes: [UInt8]) -> Span? {
        let byte = bytes[index]
        let previous = index > 0 ? bytes[index - 1] : 0x20
        switch byte {
        case UInt8(ascii: "e") where !isBase64URL(previous):
            return jwt(at: index, in: bytes)
        case UInt8(ascii: "A") where !isAlphanumeric(previous):
            return awsKeyID(at: index, in: bytes) ?? prefixed(at: index, in: bytes)
        case UInt8(ascii: "B"), UInt8(ascii: "b"):
            guard !isLetter(previous) else { return nil }
            return bearer(at: index, in: bytes) ?? basic(at: index, in: bytes)
        case UInt8(ascii: "?"), UInt8(ascii: "&"):
            return parameter(at: index, in: bytes)
        case UInt8(ascii: "\""):
            return member(at: index, in: bytes)
        case UInt8(ascii: "g"), UInt8(ascii: "x"), UInt8(ascii: "s"), UInt8(ascii: "r"):
            return isAlphanumeric(previous) ? nil : prefixed(at: index, in: bytes)
        default:
            return nil
        }
    }

    private static func jwt(at index: Int, in bytes: [UInt8]) -> Span? {
        guard hasPrefix("eyJ", at: index, in: bytes) else { return nil }
        let first = run(from: index, in: bytes, while: isBase64URL)
        guard first - index >= 10, first < bytes.count, bytes[first] == UInt8(ascii: ".") else { return nil }
        let second = run(from: first + 1, in: bytes, while: isBase64URL)
        guard second - first - 1 >= 4, second < bytes.count, bytes[second] == UInt8(ascii: ".") else { return nil }
        let third = run(from: second + 1, in: bytes, while: isBase64URL)
        return Span(range: index..<third, kind: "JWT")
    }

    private static func awsKeyID(at index: Int, in bytes: [UInt8]) -> Span? {
        guard hasPrefix("AKIA", at: index, in: bytes) || hasPrefix("ASIA", at: index, in: bytes) else { return nil }
        let end = run(from: index + 4, in: bytes) { isDigit($0) || ($0 >= 0x41 && $0 <= 0x5A) }
        guard end - index == 20, end == bytes.count || !isAlphanumeric(bytes[end]) else { return nil }
        return Span(range: index..<end, kind: "AWS access key id")
    }

    private static func bearer(at index: Int, in bytes: [UInt8]) -> Span? {
        guard hasPrefix("bearer ", at: index, in: bytes, caseInsensitive: true) else { return nil }
        let start = run(from: index + 7, in: bytes) { $0 == 0x20 }
        let end = run(from: start, in: bytes, while: isTokenCharacter)
        let token = bytes[start..<end]
        guard token.count >= 8, token.contains(where: { !isLetter($0) }) else { return nil }
        return Span(range: start..<end, kind: "bearer token")
    }

    private static func basic(at index: Int, in bytes: [UInt8]) -> Span? {
        guard hasPrefix("basic ", at: index, in: bytes, caseInsensitive: true) else { return nil }
        let start = run(from: index + 6, in: bytes) { $0 == 0x20 }
        let end = run(from: start, in: bytes) { isAlphanumeric($0) || $0 == 0x2B || $0 == 0x2F || $0 == 0x3D }
        guard end - start >= 8, let decoded = Data(base64Encoded: Data(bytes[start..<end])),
            decoded.contains(UInt8(ascii: ":"))
        else { return nil }
        return Span(range: start..<end, kind: "basic credentials")
    }

    /// `?name=value` or `&name=value` inside a URL in text, with a credential name.
    private static func parameter(at index: Int, in bytes: [UInt8]) -> Span? {
        let nameStart = index + 1
        let nameEnd = run(from: nameStart, in: bytes) { isAlphanumeric($0) || $0 == 0x5F || $0 == 0x2D || $0 == 0x2E }
        guard nameEnd > nameStart, nameEnd < bytes.count, bytes[nameEnd] == UInt8(ascii: "=") else { return nil }
        let name = String(decoding: bytes[nameStart..<nameEnd], as: UTF8.self)
        guard CredentialNames.isCredential(name, in: .query) else { return nil }
        let valueEnd = run(from: nameEnd + 1, in: bytes) { !parameterEnds.contains($0) }
        guard valueEnd > nameEnd + 1 else { return nil }
        return Span(range: (nameEnd + 1)..<valueEnd, kind: name)
    }

    /// `"name": "value"` in text that is not parsed as JSON (a stream's chunks, a body cut short), with
    /// a credential name: the value, up to its closing quote.
    private static func member(at index: Int, in bytes: [UInt8]) -> Span? {
        let nameEnd = run(from: index + 1, in: bytes) { $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
        guard nameEnd > index + 1, nameEnd - index < 128, nameEnd < bytes.count, bytes[nameEnd] == UInt8(ascii: "\"")
        else { return nil }
        var cursor = run(from: nameEnd + 1, in: bytes) { $0 == 0x20 }
        guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: ":") else { return nil }
        cursor = run(from: cursor + 1, in: bytes) { $0 == 0x20 }
        guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: "\"") else { return nil }
        let name = String(decoding: bytes[(index + 1)..<nameEnd], as: UTF8.self)
        guard CredentialNames.isCredential(name, in: .json) else { return nil }
        var end = cursor + 1
        while end < bytes.count && bytes[end] != UInt8(ascii: "\"") {
            end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1
        }
        guard end > cursor + 1 else { return nil }
        return Span(range: (cursor + 1)..<min(end, bytes.count), kind: name)
    }

    private static let parameterEnds: Set<UInt8> = Set("&\"'#<>\\ \t\r\n,;)".utf8)

    private static func prefixed(at index: Int, in bytes: [UInt8]) -> Span? {
        for (prefix, minimum, kind) in tokenPrefixes where hasPrefix(prefix, at: index, in: bytes) {
            let end = run(from: index + prefix.utf8.count, in: bytes) {
                isAlphanumeric($0) || $0 == 0x5F || $0 == 0x2D
            }
            if end - index - prefix.utf8.count >= minimum { return Span(range: index..<end, kind: kind) }
        }
        return nil
    }

    private static let tokenPrefixes: [(String, Int, String)] = [
        ("ghp_", 20, "GitHub token"), ("gho_", 20, "GitHub token"), ("ghu_", 20, "GitHub token"),
        ("ghs_", 20, "GitHub token"), ("ghr_", 20, "GitHub token"), ("github_pat_", 20, "GitHub token"),
        ("xoxb-", 10, "Slack token"), ("xoxp-", 10, "Slack token"), ("xoxa-", 10, "Slack token"),
        ("xoxs-", 10, "Slack token"), ("sk_live_", 10, "Stripe key"), ("rk_live_", 10, "Stripe key"),
        ("AIza", 30, "Google API key"),
    ]

    /// False when `bytes` holds nothing that could start a credential name or value (checked in one
    /// pass, without case): most bodies are let through without being parsed.
    static func mightHoldCredential(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer(mightHoldCredential)
    }

    /// The same for a name or a value (no copy of a native string).
    static func mightHoldCredential(_ text: some StringProtocol) -> Bool {
        text.utf8.withContiguousStorageIfAvailable(mightHoldCredential) ?? mightHoldCredential(Array(text.utf8))
    }

    private static func mightHoldCredential(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        for index in buffer.indices {
            let byte = buffer[index] | 0x20
            guard byte >= 0x61, byte <= 0x7A else { continue }
            for stem in stemsByFirstLetter[Int(byte - 0x61)] where index + stem.count <= buffer.count {
                var offset = 1
                while offset < stem.count && buffer[index + offset] | 0x20 == stem[offset] { offset += 1 }
                if offset == stem.count { return true }
            }
        }
        return false
    }

    /// The stems of credential names and the starts of secret-shaped values, lowercased, by first letter.
    private static let stemsByFirstLetter: [[[UInt8]]] = {
        let stems = [
            "tok", "secret", "pass", "pwd", "sig", "cred", "sess", "auth", "assert", "cookie", "csrf", "xsrf", "jwt",
            "otp", "key", "code", "eyj", "akia", "asia", "bearer", "basic", "gh", "xox", "sk_", "rk_", "aiza",
        ]
        var table = [[[UInt8]]](repeating: [], count: 26)
        for stem in stems { table[Int(stem.utf8.first! - 0x61)].append(Array(stem.utf8)) }
        return table
    }()

    private static func hasPrefix(
        _ prefix: String, at index: Int, in bytes: [UInt8], caseInsensitive: Bool = false
    ) -> Bool {
        var position = index
        for expected in prefix.utf8 {
            guard position < bytes.count else { return false }
            let actual = bytes[position]
            let folded = caseInsensitive && actual >= 0x41 && actual <= 0x5A ? actual + 0x20 : actual
            if folded != expected { return false }
            position += 1
        }
        return true
    }

    private static func run(from start: Int, in bytes: [UInt8], while accepts: (UInt8) -> Bool) -> Int {
        var index = start
        while index < bytes.count && accepts(bytes[index]) { index += 1 }
        return index
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
    private static func isAlphanumeric(_ byte: UInt8) -> Bool { isDigit(byte) || isLetter(byte) }
    private static func isBase64URL(_ byte: UInt8) -> Bool { isAlphanumeric(byte) || byte == 0x2D || byte == 0x5F }
    /// RFC 6750 b64token characters.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || "-._~+/=".utf8.contains(byte)
    }
}
