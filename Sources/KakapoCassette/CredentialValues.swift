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
/// - well-known token prefixes: GitHub (`ghp_`, `github_pat_`), GitLab (`glpat-`), Slack (`xoxb-`, any
///   `xox?-`, `xapp-`), Stripe (`sk_live_`, `rk_live_`), npm (`npm_`), OpenAI and Anthropic (`sk-proj-`,
///   `sk-ant-`, `sk-` and 32 more), Google API keys (`AIza`) and OAuth access tokens (`ya29.`);
/// - AWS Signature Version 4 (`AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=<hex>`) in any
///   header or text: everything after the scheme;
/// - the password of a URL's userinfo (`https://user:SECRET@host`, `postgres://u:SECRET@h/db`);
/// - PEM private key blocks (`-----BEGIN ... PRIVATE KEY-----` to its `END` line): the base64 between;
/// - payment card numbers: 15 or 16 digits (groups of 4 separated by a space or `-` too) with a card
///   network's prefix that pass the Luhn check.
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
                // A placeholder, plain or naming an echo's source, is not redacted again.
                if !Redactor.isPlaceholder(bytes[span.range]) { spans.append(span) }
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
            return awsKeyID(at: index, in: bytes) ?? sigV4(at: index, in: bytes) ?? prefixed(at: index, in: bytes)
        case UInt8(ascii: "B"), UInt8(ascii: "b"):
            guard !isLetter(previous) else { return nil }
            return bearer(at: index, in: bytes) ?? basic(at: index, in: bytes)
        case UInt8(ascii: "?"), UInt8(ascii: "&"):
            return parameter(at: index, in: bytes)
        case UInt8(ascii: "\""):
            return member(at: index, in: bytes)
        case UInt8(ascii: "g"), UInt8(ascii: "x"), UInt8(ascii: "s"), UInt8(ascii: "r"), UInt8(ascii: "n"),
            UInt8(ascii: "y"):
            return isAlphanumeric(previous) ? nil : prefixed(at: index, in: bytes)
        case UInt8(ascii: ":"):
            return userinfoPassword(at: index, in: bytes)
        case UInt8(ascii: "-"):
            return privateKey(at: index, in: bytes)
        case UInt8(ascii: "2")...UInt8(ascii: "6") where !isAlphanumeric(previous) && previous != UInt8(ascii: "."):
            return cardNumber(at: index, in: bytes)
        default:
            return nil
        }
    }

    /// `AWS4-HMAC-SHA256 Credential=AKIA.../20261129/us-east-1/s3/aws4_request, SignedHeaders=..., Signature=...`:
    /// everything after the scheme, to the end of the value (a quote, a line end).
    private static func sigV4(at index: Int, in bytes: [UInt8]) -> Span? {
        guard hasPrefix("AWS4-HMAC-SHA256 ", at: index, in: bytes) else { return nil }
        let start = run(from: index + 17, in: bytes) { $0 == 0x20 }
        let end = run(from: start, in: bytes) { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") }
        guard end - start >= 16 else { return nil }
        return Span(range: start..<end, kind: "SigV4 signature")
    }

    /// The password of a URL's userinfo, found at the `:` of `scheme://`: `https://user:SECRET@host/path`.
    private static func userinfoPassword(at index: Int, in bytes: [UInt8]) -> Span? {
        guard index > 0, isLetter(bytes[index - 1]), hasPrefix("://", at: index, in: bytes) else { return nil }
        let start = index + 3
        // The authority, up to where a path, query or the text around the URL starts.
        let end = run(from: start, in: bytes) { !authorityEnds.contains($0) && $0 > 0x20 && $0 < 0x7F }
        guard let at = bytes[start..<end].lastIndex(of: UInt8(ascii: "@")),
            let colon = bytes[start..<at].firstIndex(of: UInt8(ascii: ":")), colon + 1 < at
        else { return nil }
        return Span(range: (colon + 1)..<at, kind: "URL password")
    }

    private static let authorityEnds: Set<UInt8> = Set("/?#\"'<>\\ ,;()[]{}`".utf8)

    /// A PEM private key block: its base64 body, between the `BEGIN ... PRIVATE KEY-----` line and the `END`
    /// line (to the end of the text when the block is cut short).
    private static func privateKey(at index: Int, in bytes: [UInt8]) -> Span? {
        guard hasPrefix("-----BEGIN ", at: index, in: bytes) else { return nil }
        let labelEnd = run(from: index + 11, in: bytes) { ($0 >= 0x41 && $0 <= 0x5A) || $0 == 0x20 }
        // `PRIVATE KEY`, `RSA PRIVATE KEY`, `OPENSSH PRIVATE KEY`, `ENCRYPTED PRIVATE KEY`, ...
        let label = bytes[(index + 11)..<labelEnd]
        guard label.count <= 40, label.count >= 11, label.suffix(11).elementsEqual("PRIVATE KEY".utf8),
            hasPrefix("-----", at: labelEnd, in: bytes)
        else { return nil }
        let start = labelEnd + 5
        let limit = min(bytes.count, start + (1 << 16))
        var end = limit
        if let found = Redactor.firstOccurrence(of: Array("-----END ".utf8), in: Array(bytes[start..<limit]), from: 0) {
            end = start + found
        }
        guard end > start else { return nil }
        return Span(range: start..<end, kind: "private key")
    }

    /// A payment card number: 15 or 16 digits, in one run or in groups separated by one space or `-`, with the
    /// prefix of a card network (Visa 4, Mastercard 51-55 and 2221-2720, American Express 34 and 37, Discover
    /// 6011, 644-649 and 65), passing the Luhn check, and no digit or letter right after.
    private static func cardNumber(at index: Int, in bytes: [UInt8]) -> Span? {
        var digits: [UInt8] = []
        var end = index
        while end < bytes.count, digits.count <= 16 {
            let byte = bytes[end]
            if isDigit(byte) {
                digits.append(byte - 0x30)
                end += 1
            } else if (byte == 0x20 || byte == 0x2D), end + 1 < bytes.count, isDigit(bytes[end + 1]),
                digits.count % 4 == 0, !digits.isEmpty
            {
                end += 1
            } else {
                break
            }
        }
        guard digits.count == 15 || digits.count == 16, end == bytes.count || !isAlphanumeric(bytes[end]) else {
            return nil
        }
        let prefix2 = Int(digits[0]) * 10 + Int(digits[1])
        let prefix4 = prefix2 * 100 + Int(digits[2]) * 10 + Int(digits[3])
        let network: Bool
        switch digits.count {
        case 15: network = prefix2 == 34 || prefix2 == 37
        default:
            network =
                digits[0] == 4 || (51...55).contains(prefix2) || (2221...2720).contains(prefix4) || prefix4 == 6011
                || (644...649).contains(prefix4 / 10) || prefix2 == 65
        }
        guard network, luhn(digits) else { return nil }
        return Span(range: index..<end, kind: "payment card number")
    }

    /// The Luhn checksum (ISO/IEC 7812) holds for `digits`.
    static func luhn(_ digits: [UInt8]) -> Bool {
        var sum = 0
        for (offset, digit) in digits.reversed().enumerated() {
            var value = Int(digit)
            if offset % 2 == 1 {
                value *= 2
                if value > 9 { value -= 9 }
            }
            sum += value
        }
        return sum % 10 == 0
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
                isAlphanumeric($0) || $0 == 0x5F || $0 == 0x2D || ($0 == 0x2E && prefix == "ya29.")
            }
            // A token is random: it has a digit (`sk-a-long-article-slug-with-words` is no key).
            if end - index - prefix.utf8.count >= minimum,
                bytes[(index + prefix.utf8.count)..<end].contains(where: isDigit)
            {
                return Span(range: index..<end, kind: kind)
            }
        }
        return nil
    }

    private static let tokenPrefixes: [(String, Int, String)] = [
        ("ghp_", 20, "GitHub token"), ("gho_", 20, "GitHub token"), ("ghu_", 20, "GitHub token"),
        ("ghs_", 20, "GitHub token"), ("ghr_", 20, "GitHub token"), ("github_pat_", 20, "GitHub token"),
        ("xoxb-", 10, "Slack token"), ("xoxp-", 10, "Slack token"), ("xoxa-", 10, "Slack token"),
        ("xoxs-", 10, "Slack token"), ("xoxe-", 10, "Slack token"), ("xoxr-", 10, "Slack token"),
        ("xapp-", 10, "Slack token"), ("glpat-", 20, "GitLab token"), ("sk_live_", 10, "Stripe key"),
        ("rk_live_", 10, "Stripe key"), ("sk-proj-", 20, "OpenAI key"), ("sk-ant-", 20, "Anthropic key"),
        ("sk-", 32, "API key"), ("npm_", 30, "npm token"), ("ya29.", 20, "Google OAuth token"),
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
        var digits = 0
        for index in buffer.indices {
            let raw = buffer[index]
            if raw &- 0x30 < 10 {
                // A long run of digits may be a card number (its groups' separators do not end the run).
                digits += 1
                if digits >= 13 { return true }
                continue
            }
            if raw != 0x20 && raw != 0x2D { digits = 0 }
            if raw == UInt8(ascii: ":") {
                // `scheme://user:password@`: a URL with userinfo.
                if index + 2 < buffer.count, buffer[index + 1] == 0x2F, buffer[index + 2] == 0x2F,
                    hasUserinfo(buffer, from: index + 3)
                {
                    return true
                }
                continue
            }
            let byte = raw | 0x20
            guard byte >= 0x61, byte <= 0x7A else { continue }
            for stem in stemsByFirstLetter[Int(byte - 0x61)] where index + stem.count <= buffer.count {
                var offset = 1
                // Letters compared without case; other bytes (`_`, `.`, digits) as they are.
                while offset < stem.count && lowercased(buffer[index + offset]) == stem[offset] { offset += 1 }
                if offset == stem.count { return true }
            }
        }
        return false
    }

    /// An ASCII letter in lower case; any other byte as it is (`_ | 0x20` would be DEL, not `_`).
    @inline(__always)
    private static func lowercased(_ byte: UInt8) -> UInt8 { byte &- 0x41 < 26 ? byte | 0x20 : byte }

    /// Whether the authority starting at `start` has a `@` (userinfo) before it ends.
    private static func hasUserinfo(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
        var index = start
        while index < buffer.count, index - start < 256 {
            let byte = buffer[index]
            if byte == UInt8(ascii: "@") { return true }
            if byte <= 0x20 || byte >= 0x7F || authorityEnds.contains(byte) { return false }
            index += 1
        }
        return false
    }

    /// The stems of credential names and the starts of secret-shaped values, lowercased, by first letter.
    private static let stemsByFirstLetter: [[[UInt8]]] = {
        let stems = [
            "tok", "secret", "pass", "pwd", "sig", "cred", "sess", "auth", "assert", "cookie", "csrf", "xsrf", "jwt",
            "otp", "key", "code", "eyj", "akia", "asia", "bearer", "basic", "gh", "glpat", "xox", "xapp", "sk_", "rk_",
            "sk-", "aiza", "npm_", "ya29", "aws4", "pin", "cvv", "cvc", "ssn", "hmac",
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
