import KakapoJSON

/// How a request's GraphQL operations differ from a recording's, in the words of a miss report:
/// `operation: GetUser here, GetUsers recorded`, `variables /id: 7 here, 1 recorded`,
/// `query: differs at line 3 column 5` (in the request's document).
public struct GraphQLDifferences {
    /// One line per difference.
    public private(set) var lines: [String] = []
    /// True when an operation's name differs: the recording is of another operation.
    public private(set) var operationDiffers = false

    /// How long a value may be in a line before it is cut.
    static let valueLimit = 60

    /// Compares `live` with `recorded` through their forms as compared (`matchingForm` with ignored and
    /// redacted places taken out); `hidesValue` names variables whose values are never shown (secrets).
    public init(
        recorded: GraphQLRequest, recordedForm: JSONValue, live: GraphQLRequest, liveForm: JSONValue,
        hidesValue: (String) -> Bool
    ) {
        guard recorded.isBatch == live.isBatch, recorded.operations.count == live.operations.count else {
            lines.append("batch: \(Self.size(of: live)) here, \(Self.size(of: recorded)) recorded")
            operationDiffers = true
            return
        }
        for index in live.operations.indices {
            let prefix = live.isBatch ? "batch #\(index + 1) " : ""
            // A form may have lost elements to an ignored pointer (`/1`): those are not compared.
            guard let recordedOne = Self.operationForm(recordedForm, at: index, batch: recorded.isBatch),
                let liveOne = Self.operationForm(liveForm, at: index, batch: live.isBatch)
            else { continue }
            compare(
                live.operations[index], liveOne, with: recorded.operations[index], recordedOne, prefix: prefix,
                hidesValue: hidesValue)
        }
    }

    private mutating func compare(
        _ live: GraphQLOperation, _ liveForm: JSONValue, with recorded: GraphQLOperation, _ recordedForm: JSONValue,
        prefix: String, hidesValue: (String) -> Bool
    ) {
        if !Self.same(liveForm["operationName"], recordedForm["operationName"]) {
            lines.append(
                prefix + "operation: \(live.name ?? "(anonymous)") here, \(recorded.name ?? "(anonymous)") recorded")
            operationDiffers = true
        }
        if !Self.same(liveForm["query"], recordedForm["query"]) {
            if let (line, column) = live.document.firstDifference(from: recorded.document) {
                lines.append(prefix + "query: differs at line \(line) column \(column)")
            }
        }
        if let liveVariables = liveForm["variables"], let recordedVariables = recordedForm["variables"],
            !liveVariables.isEquivalent(to: recordedVariables)
        {
            for pointer in recordedVariables.differences(from: liveVariables) {
                let place = pointer.description.isEmpty ? "" : " " + pointer.description
                if pointer.components.contains(where: hidesValue) {
                    lines.append(prefix + "variables\(place) differ")
                } else {
                    let (here, there) = Self.texts(liveVariables[pointer: pointer], recordedVariables[pointer: pointer])
                    lines.append(prefix + "variables\(place): \(here) here, \(there) recorded")
                }
            }
        }
        let others = (liveForm.objectValue?.keys ?? []) + (recordedForm.objectValue?.keys ?? [])
        var seen: Set<String> = ["operationName", "query", "variables"]
        for key in others where seen.insert(key).inserted {
            if !Self.same(liveForm[key], recordedForm[key]) { lines.append(prefix + "body field /\(key) differs") }
        }
    }

    /// The form of the operation at `index`: the form itself for a single operation, else its element.
    private static func operationForm(_ form: JSONValue, at index: Int, batch: Bool) -> JSONValue? {
        guard batch else { return form }
        guard let elements = form.arrayValue, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    private static func same(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let a?, let b?): return a.isEquivalent(to: b)
        default: return false
        }
    }

    private static func size(of request: GraphQLRequest) -> String {
        request.isBatch ? "a batch of \(request.operations.count)" : "one operation"
    }

    /// Two values as a line shows them: strings bare and other values as JSON, both as JSON when that is
    /// what tells them apart (`"7"` and `7`), absent ones as `absent`, long ones cut.
    private static func texts(_ a: JSONValue?, _ b: JSONValue?) -> (String, String) {
        var (x, y) = (text(a, quoted: false), text(b, quoted: false))
        if x == y { (x, y) = (text(a, quoted: true), text(b, quoted: true)) }
        return (x, y)
    }

    private static func text(_ value: JSONValue?, quoted: Bool) -> String {
        guard let value else { return "absent" }
        let full: String
        if case .string(let string) = value, !quoted {
            full = string
        } else {
            full = String(decoding: JSONWriter().write(value), as: UTF8.self)
        }
        return full.count > valueLimit ? String(full.prefix(valueLimit)) + "…" : full
    }
}
