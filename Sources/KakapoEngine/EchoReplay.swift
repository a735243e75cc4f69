import KakapoCassette
import KakapoHTTP

/// Echoes given back on replay (issue 42): a recorded response that repeated a secret of its request was
/// written with a placeholder naming where the request carried it, `[REDACTED](request header
/// x-csrf-token)` (`Redactor+Echoes.swift`); replay writes the live request's value from the same place
/// in its stead, as `JSONRPCReplay` gives JSON-RPC ids back, so a client that checks the echo (a CSRF
/// token, a reflected header) still works. The value is escaped for where it goes: a JSON string (JSON
/// and event-stream bodies), XML or HTML text, a header (a value with a line break is not given back);
/// other text takes it as it is. Only the sources recording listed for the interaction
/// (`Interaction.echoSources`) are filled in, so text an upstream sent that looks like a placeholder never
/// is; a placeholder whose source the live request does not have stays. At most `largestSpliceCount`
/// placeholders are filled in an answer, adding at most `largestAddedBytes`.
enum EchoReplay {
    typealias Splice = AnswerSplicing.Splice

    static let largestSpliceCount = 256
    static let largestAddedBytes = 1 << 20

    /// `answer` with the live values of `request` in place of the echo placeholders of `sources`; nil when
    /// none of them has a live value (the recorded answer is served as it is).
    static func answer(_ answer: Answer, to request: HTTP.Request, sources: [String], redactor: Redactor) -> Answer? {
        let allowed = Set(sources)
        var values: [String: String] = [:]
        for (source, value) in redactor.echoSources(of: request) where values[source] == nil && allowed.contains(source)
        {
            values[source] = value
        }
        guard !values.isEmpty else { return nil }
        return AnswerSplicing.rewrite(
            answer,
            headers: { headers in
                var changed = false
                var result = HTTP.Headers()
                for field in headers {
                    var value = field.value
                    if value.contains(Redactor.echoPlaceholderPrefix) {
                        let bytes = Array(value.utf8)
                        let found = splices(in: bytes, values: values, escaping: .header)
                        if !found.isEmpty {
                            value = String(decoding: AnswerSplicing.apply(found, to: bytes), as: UTF8.self)
                            changed = true
                        }
                    }
                    result.add(name: field.name, value: value)
                }
                if changed { headers = result }
                return changed
            },
            splices: { content, headers in
                splices(in: content, values: values, escaping: Escaping(contentType: headers["Content-Type"]))
            })
    }

    /// How a live value is written where a placeholder was.
    enum Escaping {
        /// Inside a JSON string.
        case json
        /// XML or HTML text or attribute.
        case markup
        /// A header value: given back only without control characters (a tab aside).
        case header
        /// As it is.
        case none

        init(contentType: String?) {
            let type = contentType?.lowercased() ?? ""
            if type.contains("json") || type.contains("event-stream") || type.contains("javascript") {
                self = .json
            } else if type.contains("xml") || type.contains("html") {
                self = .markup
            } else {
                self = .none
            }
        }

        /// `value` written for this place; nil when it cannot be.
        func write(_ value: String) -> [UInt8]? {
            var output: [UInt8] = []
            output.reserveCapacity(value.utf8.count)
            for byte in value.utf8 {
                switch (self, byte) {
                case (.json, UInt8(ascii: "\"")), (.json, UInt8(ascii: "\\")):
                    output += [UInt8(ascii: "\\"), byte]
                case (.json, 0..<0x20):
                    output += Array("\\u00".utf8) + Self.hex(byte >> 4) + Self.hex(byte & 0x0F)
                case (.markup, UInt8(ascii: "&")): output += Array("&amp;".utf8)
                case (.markup, UInt8(ascii: "<")): output += Array("&lt;".utf8)
                case (.markup, UInt8(ascii: ">")): output += Array("&gt;".utf8)
                case (.markup, UInt8(ascii: "\"")): output += Array("&quot;".utf8)
                case (.markup, UInt8(ascii: "'")): output += Array("&apos;".utf8)
                case (.header, 0x00..<0x09), (.header, 0x0A..<0x20), (.header, 0x7F): return nil
                default: output.append(byte)
                }
            }
            return output
        }

        private static func hex(_ nibble: UInt8) -> [UInt8] { [nibble < 10 ? 0x30 + nibble : 0x57 + nibble] }
    }

    /// The splices that put the live value of each echo placeholder in `bytes` whose source `values` has.
    static func splices(in bytes: [UInt8], values: [String: String], escaping: Escaping) -> [Splice] {
        let prefix = Array(Redactor.echoPlaceholderPrefix.utf8)
        var found: [Splice] = []
        var added = 0
        var index = 0
        while found.count < largestSpliceCount, let start = Redactor.firstOccurrence(of: prefix, in: bytes, from: index)
        {
            let sourceStart = start + prefix.count
            // A source is at most 200 bytes of printable ASCII without parentheses (`EchoSources`).
            guard let close = bytes[sourceStart..<min(bytes.count, sourceStart + 220)].firstIndex(of: UInt8(ascii: ")"))
            else {
                index = sourceStart
                continue
            }
            let source = String(decoding: bytes[sourceStart..<close], as: UTF8.self)
            if let value = values[source], let written = escaping.write(value) {
                added += written.count
                guard added <= largestAddedBytes else { break }
                found.append(Splice(range: start..<(close + 1), bytes: written))
            }
            index = close + 1
        }
        return found
    }
}
