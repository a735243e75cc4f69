/// One JSON:API error object (jsonapi.org, v1.1 "Error Objects"). `status` is written as a string, as
/// the spec requires.
public struct JSONAPIError: CustomSerializable, Hashable, Sendable {
    /// Where the error comes from in the request.
    public struct Source: Hashable, Sendable {
        /// A JSON pointer into the request document (`/data/attributes/title`).
        public var pointer: String?
        /// The query parameter that caused the error.
        public var parameter: String?
        /// The request header that caused the error.
        public var header: String?

        public init(pointer: String? = nil, parameter: String? = nil, header: String? = nil) {
            self.pointer = pointer
            self.parameter = parameter
            self.header = header
        }
    }

    public var status: Int
    public var id: String?
    public var code: String?
    public var title: String?
    public var detail: String?
    public var source: Source?
    public var aboutLink: JSONAPILink?
    public var meta: JSONValue?

    public init(
        status: Int, id: String? = nil, code: String? = nil, title: String? = nil, detail: String? = nil,
        source: Source? = nil, aboutLink: JSONAPILink? = nil, meta: JSONValue? = nil
    ) {
        self.status = status
        self.id = id
        self.code = code
        self.title = title
        self.detail = detail
        self.source = source
        self.aboutLink = aboutLink
        self.meta = meta
    }

    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        var object = JSONObject()
        if let id { object["id"] = .string(id) }
        if let aboutLink { object["links"] = .object(["about": aboutLink.serialized() ?? .null]) }
        object["status"] = .string(String(status))
        if let code { object["code"] = .string(code) }
        if let title { object["title"] = .string(title) }
        if let detail { object["detail"] = .string(detail) }
        if let source {
            var members = JSONObject()
            if let pointer = source.pointer { members["pointer"] = .string(pointer) }
            if let parameter = source.parameter { members["parameter"] = .string(parameter) }
            if let header = source.header { members["header"] = .string(header) }
            object["source"] = .object(members)
        }
        if let meta { object["meta"] = meta }
        return .object(object)
    }
}

/// A JSON:API error document: `{"errors": [...]}`, never with `data`.
public struct JSONAPIErrorDocument: CustomSerializable, Hashable, Sendable {
    public var errors: [JSONAPIError]
    public var meta: JSONValue?

    public init(_ errors: [JSONAPIError], meta: JSONValue? = nil) {
        self.errors = errors
        self.meta = meta
    }

    /// The HTTP status that fits the errors: theirs if they agree, else 400 or 500 by class.
    public var status: Int {
        let statuses = Set(errors.map(\.status))
        if statuses.count == 1, let only = statuses.first { return only }
        return statuses.contains { $0 >= 500 } ? 500 : 400
    }

    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        var object: JSONObject = ["errors": .array(errors.compactMap { $0.serialized() })]
        if let meta { object["meta"] = meta }
        return .object(object)
    }
}
