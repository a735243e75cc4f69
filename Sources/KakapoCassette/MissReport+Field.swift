import KakapoJSON

extension MissReport {
    /// One difference between a request and a recording, structured for a page to highlight: which part
    /// of the request (`query`, `body`, `header`, `path`, `method`, `host`, or `other` for what has no
    /// single place, such as a GraphQL operation or a recording already played), the name or JSON pointer
    /// in it, and the two values where they are known. Each goes with one of the candidate's
    /// `differences`, which says the same in words.
    public struct Field: Sendable, Hashable {
        /// Where in the request the difference is.
        public enum Part: String, Sendable {
            case query, body, header, path, method, host, other
        }

        public let part: Part
        /// The query parameter's or header's name.
        public var name: String?
        /// Where in a JSON body (`/user/name`).
        public var pointer: String?
        /// The value in the request; nil when it has none (an absent parameter) or it is not shown.
        public var here: String?
        /// The value in the recording; nil when it has none or it is not shown.
        public var recorded: String?
        /// The difference in words, for `other`.
        public var text: String?

        init(
            _ part: Part, name: String? = nil, pointer: String? = nil, here: String? = nil, recorded: String? = nil,
            text: String? = nil
        ) {
            self.part = part
            self.name = name
            self.pointer = pointer
            self.here = here
            self.recorded = recorded
            self.text = text
        }

        /// `{"part": "query", "name": "page", "here": "2", "recorded": "1"}`, with only the keys known.
        public var json: JSONValue {
            var object: JSONObject = ["part": .string(part.rawValue)]
            if let name { object["name"] = .string(name) }
            if let pointer { object["pointer"] = .string(pointer) }
            if let here { object["here"] = .string(here) }
            if let recorded { object["recorded"] = .string(recorded) }
            if let text { object["text"] = .string(text) }
            return .object(object)
        }
    }

    /// The fields that a body difference names: a JSON body's pointers, or, for other bodies (form,
    /// multipart, GraphQL, bytes), each line as an `other` field.
    static func bodyFields(recorded: ComparableBody, live: ComparableBody, lines: [String]) -> [Field] {
        if case .json(let recordedJSON) = recorded, case .json(let liveJSON) = live {
            let pointers = recordedJSON.differences(from: liveJSON)
            if pointers.count == lines.count {
                return pointers.map { Field(.body, pointer: $0.description.isEmpty ? "/" : $0.description) }
            }
        }
        return lines.map { Field(.other, text: $0) }
    }
}
