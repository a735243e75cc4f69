import KakapoCassette
import KakapoHTTP
import KakapoJSON

/// How a client message is compared with the one the recording expects: text exactly, or as JSON when both
/// are JSON (key order, whitespace and number spelling do not count; the `--ignore-body-field` pointers and
/// the redactor's are left out, a recorded `[REDACTED]` matches any value, and a JSON-RPC request's `id` is
/// left out, as for request bodies); binary byte for byte. A recorded text that recording redacted in place
/// (`LOGIN Bearer [REDACTED]`, a handshake token echoed) is compared with the live text cut the same way,
/// with the live handshake's secrets, so the same client matches with a different token; a binary one that
/// recording masked is compared with the live one masked the same way.
package struct WebSocketMessageMatch: Sendable {
    /// The pointers left out of both sides (`--ignore-body-field`, `--redact-json-pointer`).
    let ignoredFields: [JSONPointer]
    let redactor: Redactor
    /// The live upgrade request: its credentials are the ones a live message may echo.
    let handshake: HTTP.Request

    package init(matching: MatchOptions, redactor: Redactor, handshake: HTTP.Request) {
        ignoredFields = matching.ignoredBodyFields + redactor.jsonPointers
        self.redactor = redactor
        self.handshake = handshake
    }

    /// The longest quote of a value or text in a difference, in characters.
    static let quoteLimit = 32

    /// Nil when `live` matches `recorded`; otherwise the first difference, as a phrase that follows
    /// "differs" (` at /price: 12 here, 11 recorded`).
    package func difference(_ live: WebSocketMessage.Payload, from recorded: WebSocketMessage.Payload) -> String? {
        switch (live, recorded) {
        case (.text(let live), .text(let recorded)):
            if live == recorded { return nil }
            let recordedJSON = Self.json(recorded)
            if let liveJSON = Self.json(live), let recordedJSON {
                guard let difference = jsonDifference(liveJSON, from: recordedJSON) else { return nil }
                // A secret redacted inside a longer string (`"auth": "Bearer [REDACTED]"`) is no wildcard
                // of its own: the live JSON is cut the way recording cut it, then compared again.
                let cut = redactor.clientTextForMatching(live, recorded: recorded, handshake: handshake)
                guard cut != live, let cutJSON = Self.json(cut) else { return difference }
                return jsonDifference(cutJSON, from: recordedJSON)
            }
            // Cut only when the recording holds the placeholder (the call returns `live` otherwise); the
            // difference then quotes the cut text, so a live secret never reaches the log or close reason.
            let cut = redactor.clientTextForMatching(live, recorded: recorded, handshake: handshake)
            if cut == recorded { return nil }
            return Self.textDifference(cut, from: recorded)
        case (.binary(var live), .binary(let recorded)):
            if live == recorded { return nil }
            // Recording masked credential shapes and echoed secrets at their own length: the live message is
            // masked the same way (its secrets never reach a difference either).
            if live.count == recorded.count {
                live = redactor.clientBinaryForMatching(live, handshake: handshake)
                if live == recorded { return nil }
            }
            let index =
                zip(live, recorded).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(live.count, recorded.count)
            return ": binary, at byte \(index) (\(live.count) bytes here, \(recorded.count) recorded)"
        case (.binary, .text):
            return ": a binary message here, a text one recorded"
        case (.text, .binary):
            return ": a text message here, a binary one recorded"
        }
    }

    /// `text` as JSON when it is a JSON object or array.
    private static func json(_ text: String) -> JSONValue? {
        let bytes = Array(text.utf8)
        guard JSONParser.looksLikeContainer(bytes) else { return nil }
        return try? JSONParser.parse(bytes)
    }

    private func jsonDifference(_ live: JSONValue, from recorded: JSONValue) -> String? {
        var live = JSONRPCMessage.forMatching(live)
        var recorded = JSONRPCMessage.forMatching(recorded)
        // Where the recording was redacted, the live message holds the real value: left out on both sides.
        let left = ignoredFields + recorded.pointers(toString: Redactor.placeholder)
        for pointer in left {
            live = live.replacing(pointer, with: nil)
            recorded = recorded.replacing(pointer, with: nil)
        }
        guard !live.isEquivalent(to: recorded) else { return nil }
        guard let pointer = recorded.differences(from: live, limit: 1).first else { return " as JSON" }
        let place = pointer.components.isEmpty ? "/" : pointer.description
        if let name = pointer.components.last, redactor.isSecretField(name) {
            return " at \(place) (a secret field: its values are not shown)"
        }
        return
            " at \(place): \(Self.quote(live[pointer: pointer])) here, \(Self.quote(recorded[pointer: pointer])) recorded"
    }

    /// A value of a difference as compact JSON, cut to `quoteLimit` characters; `absent` for none.
    private static func quote(_ value: JSONValue?) -> String {
        guard let value else { return "absent" }
        return cut(String(decoding: JSONWriter().write(value), as: UTF8.self))
    }

    private static func textDifference(_ live: String, from recorded: String) -> String {
        let liveCharacters = Array(live)
        let recordedCharacters = Array(recorded)
        let index =
            zip(liveCharacters, recordedCharacters).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(liveCharacters.count, recordedCharacters.count)
        let here = cut(String(liveCharacters[index...]))
        let there = cut(String(recordedCharacters[index...]))
        return " at character \(index): \(here.isEmpty ? "its end" : "\"\(here)\"") here, "
            + "\(there.isEmpty ? "its end" : "\"\(there)\"") recorded"
    }

    /// `text` cut to `quoteLimit` characters (with `…`), control characters shown as `?`, so a log line or
    /// close reason stays one readable line.
    private static func cut(_ text: String) -> String {
        let shown = text.prefix(quoteLimit).map { character in
            character.unicodeScalars.contains { $0.properties.generalCategory == .control } ? "?" : character
        }
        return String(shown) + (text.dropFirst(quoteLimit).isEmpty ? "" : "…")
    }
}
