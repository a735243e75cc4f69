import ArgumentParser
import Kakapo

/// Which values never reach a cassette, beyond the built-in credentials.
struct RedactionOptions: ParsableArguments {
    @Option(
        name: .customLong("redact-header"), help: "Another header whose value never reaches the cassette (repeatable).")
    var redactHeaders: [String] = []

    @Option(
        name: .customLong("redact-query"),
        help: "Another query parameter whose value never reaches the cassette (repeatable).")
    var redactQuery: [String] = []

    @Option(
        name: .customLong("redact-json"),
        help:
            "A JSON body field (a JSON pointer such as /password) whose value never reaches the cassette (repeatable).")
    var redactJSON: [String] = []

    @Option(
        name: .customLong("no-redact"),
        help: "A header or query parameter to write as it is, even though it is a credential (repeatable).")
    var keep: [String] = []

    func validate() throws {
        try validatePointers(redactJSON, flag: "--redact-json")
    }

    var redactor: Redactor {
        Redactor().adding(
            headers: redactHeaders, queryParameters: redactQuery, jsonPointers: redactJSON.compactMap(JSONPointer.init),
            keeping: keep)
    }
}
