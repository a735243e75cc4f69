import ArgumentParser
import Kakapo

/// Which values never reach a cassette, the journal or a log, beyond the built-in rules (credentials by
/// the shape of their names and values).
struct RedactionOptions: ParsableArguments {
    @Option(
        name: .customLong("redact-header"), help: "Another header whose value never reaches the cassette (repeatable).")
    var redactHeaders: [String] = []

    @Option(
        name: .customLong("redact-query"),
        help: "Another query parameter or form field whose value never reaches the cassette (repeatable).")
    var redactQuery: [String] = []

    @Option(
        name: .customLong("redact-json"),
        help:
            "A JSON body field (a JSON pointer such as /password) whose value never reaches the cassette (repeatable).")
    var redactJSON: [String] = []

    @Option(
        name: .customLong("redact"),
        help: ArgumentHelp(
            "A name whose value never reaches the cassette wherever it appears: header, query parameter, form field, JSON member at any depth, XML element or attribute (repeatable).",
            discussion:
                "For values the built-in rules leave in clear, such as the correlation ids progressToken, state, nonce, requestId, Idempotency-Key and X-Request-Id."
        ))
    var redactNames: [String] = []

    @Option(
        name: .customLong("no-redact"),
        help:
            "A header, query parameter, form or JSON field name to write as it is, even though it looks like a credential (repeatable)."
    )
    var keep: [String] = []

    @Option(
        name: .customLong("redact-all-except"),
        help: ArgumentHelp(
            "Allowlist mode: redact every header, query parameter, form and JSON field except these names (repeatable).",
            discussion:
                "Content-Type, Content-Length, Content-Encoding, Transfer-Encoding and Host are always kept: nothing replays without them."
        ))
    var allowed: [String] = []

    func validate() throws {
        try validatePointers(redactJSON, flag: "--redact-json")
        for name in allowed + keep where name.isEmpty || name.contains(where: \.isWhitespace) {
            throw ValidationError("a name to keep cannot be empty or hold spaces: \"\(name)\"")
        }
        for name in redactNames where name.isEmpty || name.contains(where: \.isWhitespace) {
            throw ValidationError("--redact: a name cannot be empty or hold spaces: \"\(name)\"")
        }
        for name in redactNames where keep.contains(where: { $0.lowercased() == name.lowercased() }) {
            throw ValidationError("--redact and --no-redact both name \"\(name)\": choose one")
        }
        for name in redactNames where allowed.contains(where: { $0.lowercased() == name.lowercased() }) {
            throw ValidationError("--redact and --redact-all-except both name \"\(name)\": choose one")
        }
    }

    var redactor: Redactor {
        let redactor = Redactor().adding(
            headers: redactHeaders, queryParameters: redactQuery, jsonPointers: redactJSON.compactMap(JSONPointer.init),
            names: redactNames, keeping: keep)
        return allowed.isEmpty ? redactor : redactor.allowingOnly(allowed + keep)
    }
}
