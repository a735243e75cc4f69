import KakapoJSON

/// One `{{...}}` tag of a template.
enum TemplateTag: Hashable, Sendable {
    /// `{{params.NAME}}`: a path parameter (`{{params.**}}` is what a trailing `**` matched).
    case parameter(String)
    /// `{{query.NAME}}`: the first value of a query parameter, decoded.
    case query(String)
    /// `{{headers.NAME}}`: a request header, any case.
    case header(String)
    /// `{{body.a.b.0}}`: a value in the JSON request body.
    case body(JSONPointer)
    /// `{{now}}`: the time of the answer, ISO 8601, the same wherever it appears in one answer;
    /// `{{now.new}}` reads the clock again.
    case now(fresh: Bool)
    /// `{{uuid}}`: a random UUID made once per answer, so a `Location` header and the body's id agree;
    /// `{{uuid.new}}` is a different one each time it appears.
    case uuid(fresh: Bool)
    /// `{{recordedAt}}`: when the cassette's recording of the same request was made, ISO 8601; nothing when
    /// the cassette has none.
    case recordedAt
    /// `{{message.text}}`: the text of the client's WebSocket message a route's script answers.
    case messageText
    /// `{{message.json.a.b}}`: a value in that message parsed as JSON (`{{message.json}}` the whole value).
    case messageJSON(JSONPointer)

    /// Whether the tag reads the client's WebSocket message, which only a websocket rule has.
    var readsMessage: Bool {
        switch self {
        case .messageText, .messageJSON: return true
        default: return false
        }
    }

    /// Parses the inside of a tag; throws a message for anything else.
    init(_ text: String) throws(TemplateError) {
        let trimmed = text.trimmingSpaces()
        switch trimmed {
        case "now": self = .now(fresh: false)
        case "now.new": self = .now(fresh: true)
        case "uuid": self = .uuid(fresh: false)
        case "uuid.new": self = .uuid(fresh: true)
        case "recordedAt": self = .recordedAt
        case "message.text": self = .messageText
        case "message.json": self = .messageJSON(JSONPointer(components: []))
        default: try self.init(dotted: trimmed)
        }
    }

    private init(dotted trimmed: String) throws(TemplateError) {
        guard let dot = trimmed.firstIndex(of: "."), trimmed.index(after: dot) < trimmed.endIndex else {
            throw TemplateError(tag: trimmed)
        }
        let rest = String(trimmed[trimmed.index(after: dot)...])
        switch trimmed[..<dot] {
        case "params": self = .parameter(rest)
        case "query": self = .query(rest)
        case "headers": self = .header(rest)
        case "body":
            self = .body(try TemplateTag.pointer(rest, tag: trimmed))
        case "message" where rest.hasPrefix("json."):
            self = .messageJSON(try TemplateTag.pointer(String(rest.dropFirst("json.".count)), tag: trimmed))
        default: throw TemplateError(tag: trimmed)
        }
    }
}

extension TemplateTag {
    /// The pointer `a.b.0` names; empty components (`a..b`, a trailing dot) are refused.
    fileprivate static func pointer(_ dotted: String, tag: String) throws(TemplateError) -> JSONPointer {
        let components = dotted.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !components.contains("") else { throw TemplateError(tag: tag) }
        return JSONPointer(components: components)
    }
}

/// A tag a template does not know, or one that names a path parameter its route does not have.
struct TemplateError: Error {
    let message: String

    init(tag: String) {
        message =
            "unknown template tag {{\(tag)}}; use params.NAME, query.NAME, headers.NAME, body.PATH, now, now.new, recordedAt, "
            + "uuid or uuid.new (and message.text, message.json.PATH in a websocket rule's messages)"
    }

    init(message: String) { self.message = message }
}

/// What the templates of one route may name: its path parameters (`**` when it ends in a catch-all), and
/// the client's message in the messages a websocket rule sends.
struct TemplateScope: Sendable {
    /// The route as people write it: `GET /a/:id`.
    let route: String
    /// The parameter names in path order.
    let parameters: [String]

    /// No check of parameter names: any is accepted.
    static let any = TemplateScope(route: "", parameters: [], checks: false)
    let checks: Bool
    /// True for the messages a websocket rule sends, which answer a client message (`{{message.text}}`).
    var readsMessage = false

    init(route: String, parameters: [String], checks: Bool = true) {
        self.route = route
        self.parameters = parameters
        self.checks = checks
    }

    /// This scope for the messages a websocket rule sends in answer to a client message.
    var answeringMessage: TemplateScope {
        var scope = self
        scope.readsMessage = true
        return scope
    }

    /// Throws for a `{{params.NAME}}` tag whose name the route does not capture, and for a `{{message...}}`
    /// tag where there is no client message (a response, a script's opening messages). The second check
    /// holds for every scope: such a tag would always render empty.
    func check(_ template: Template) throws(TemplateError) {
        for part in template.parts {
            guard case .tag(let tag) = part, tag.readsMessage, !readsMessage else { continue }
            throw TemplateError(
                message:
                    "a {{message...}} tag reads the client's WebSocket message: only the send of a websocket rule "
                    + "(on: [{when: ..., send: [...]}]) has one")
        }
        guard checks else { return }
        for part in template.parts {
            guard case .tag(.parameter(let name)) = part, !parameters.contains(name) else { continue }
            let has =
                parameters.isEmpty
                ? "has no parameters" : "has parameters: " + parameters.joined(separator: ", ")
            throw TemplateError(message: "{{params.\(name)}}: route \(route) \(has)")
        }
    }
}

/// A string with `{{...}}` tags, split once when the routes are loaded.
struct Template: Sendable {
    enum Part: Sendable {
        case literal(String)
        case tag(TemplateTag)
    }

    let parts: [Part]
    /// The bytes of the literal parts, a good first guess of the rendered size.
    let literalByteCount: Int

    /// Splits `text`; `{{` without a closing `}}` is literal text.
    init(_ text: String) throws(TemplateError) {
        var parts: [Part] = []
        var rest = Substring(text)
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            if open.lowerBound > rest.startIndex { parts.append(.literal(String(rest[..<open.lowerBound]))) }
            parts.append(.tag(try TemplateTag(String(rest[open.upperBound..<close.lowerBound]))))
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        self.parts = parts
        literalByteCount = parts.reduce(0) { total, part in
            if case .literal(let text) = part { return total + text.utf8.count }
            return total
        }
    }

    /// True when the text has no tag: it renders to itself.
    var isConstant: Bool {
        parts.allSatisfy { if case .literal = $0 { return true } else { return false } }
    }

    /// The tag when the whole text is exactly one tag (such a JSON string takes the type of its value).
    var soleTag: TemplateTag? {
        if parts.count == 1, case .tag(let tag) = parts[0] { return tag }
        return nil
    }

    /// The text with every tag replaced: strings as they are, other JSON values written compactly,
    /// nothing for a value the request does not have.
    func render(_ context: TemplateContext) -> String {
        var bytes: [UInt8] = []
        render(context, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `render(_:)` appended to `bytes` as UTF-8, without building a string.
    func render(_ context: TemplateContext, into bytes: inout [UInt8]) {
        bytes.reserveCapacity(bytes.count + literalByteCount + 64)
        for part in parts {
            switch part {
            case .literal(let literal): bytes.append(contentsOf: literal.utf8)
            case .tag(let tag):
                switch context.value(of: tag) {
                case .string(let value)?: bytes.append(contentsOf: value.utf8)
                case let value?: bytes.append(contentsOf: JSONWriter().write(value))
                case nil: break
                }
            }
        }
    }
}

/// A JSON body with templates in its strings. Parts without tags are kept as values and copied as they are.
indirect enum JSONTemplate: Sendable {
    case constant(JSONValue)
    case string(Template)
    case array([JSONTemplate])
    case object([(String, JSONTemplate)])

    init(_ value: JSONValue, scope: TemplateScope = .any) throws(TemplateError) {
        switch value {
        case .string(let text):
            let template = try Template(text)
            try scope.check(template)
            self = template.isConstant ? .constant(value) : .string(template)
        case .array(let elements):
            var items: [JSONTemplate] = []
            for element in elements { items.append(try JSONTemplate(element, scope: scope)) }
            self = items.allSatisfy(\.isConstant) ? .constant(value) : .array(items)
        case .object(let object):
            var members: [(String, JSONTemplate)] = []
            for (key, member) in object { members.append((key, try JSONTemplate(member, scope: scope))) }
            self = members.allSatisfy(\.1.isConstant) ? .constant(value) : .object(members)
        default:
            self = .constant(value)
        }
    }

    var isConstant: Bool {
        if case .constant = self { return true }
        return false
    }

    /// The value for one request. A string that is exactly one tag takes the type of what the tag names
    /// (null when the request has nothing there).
    func render(_ context: TemplateContext) -> JSONValue {
        switch self {
        case .constant(let value): return value
        case .string(let template):
            if let tag = template.soleTag { return context.value(of: tag) ?? .null }
            return .string(template.render(context))
        case .array(let items): return .array(items.map { $0.render(context) })
        case .object(let members): return .object(JSONObject(members.map { ($0.0, $0.1.render(context)) }))
        }
    }
}
