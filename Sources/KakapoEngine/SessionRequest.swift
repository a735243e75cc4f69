import KakapoCassette
import KakapoJSON

/// The body of `POST /__kakapo/sessions`, checked member by member: `{"cassette": "a/b.json", "mode":
/// "none|new|all|once|passthrough", "strict": false, "match": {"ignoreQuery": [...], "ignoreBodyFields":
/// [...], "headers": [...]}}`. Every member but `cassette` is optional; the server's flags are the defaults.
struct SessionRequest {
    /// The most entries a `match` list may hold.
    static let maximumListCount = 256

    var cassette: String
    var mode: ProxyMode
    var strict = false
    /// `"store": "own"`: the routes-file resources seeded afresh for this session alone.
    var ownStore = false
    var matching: MatchOptions

    struct Invalid: Error {
        let message: String
    }

    init(_ body: [UInt8], defaultMode: ProxyMode, defaultMatching: MatchOptions) throws(Invalid) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(body)
        } catch {
            throw Invalid(message: "the body is not JSON: \(error)")
        }
        guard case .object(let object) = value else {
            throw Invalid(message: "expected an object such as {\"cassette\": \"tests/test_get.json\"}")
        }
        let known: Set<String> = ["cassette", "mode", "strict", "match", "store"]
        if let unknown = object.keys.first(where: { !known.contains($0) }) {
            throw Invalid(
                message: "unknown member \"\(unknown.prefix(64))\" (expected cassette, mode, strict, match, store)")
        }
        guard case .string(let cassette)? = object["cassette"], !cassette.isEmpty else {
            throw Invalid(
                message: "\"cassette\" must be a non-empty string: the cassette's path in the session directory")
        }
        guard cassette.utf8.count <= 1024, !cassette.contains("\0") else {
            throw Invalid(message: "\"cassette\" must be a path of at most 1024 bytes with no NUL")
        }
        self.cassette = cassette
        switch object["mode"] {
        case nil, .null?:
            mode = defaultMode
        case .string(let name)?:
            guard let mode = ProxyMode(rawValue: name) else {
                throw Invalid(
                    message: "\"mode\": \"\(name.prefix(64))\" is not one of none, new, all, once, passthrough")
            }
            self.mode = mode
        default:
            throw Invalid(message: "\"mode\" must be a string: none, new, all, once or passthrough")
        }
        switch object["strict"] {
        case nil, .null?: break
        case .bool(let strict)?: self.strict = strict
        default: throw Invalid(message: "\"strict\" must be true or false")
        }
        switch object["store"] {
        case nil, .null?, .string("shared")?: break
        case .string("own")?: ownStore = true
        default:
            throw Invalid(
                message:
                    "\"store\" must be \"own\" (the routes-file resources seeded afresh for this session) or \"shared\""
            )
        }
        matching = defaultMatching
        switch object["match"] {
        case nil, .null?: break
        case .object(let match)?:
            let members: Set<String> = ["ignoreQuery", "ignoreBodyFields", "headers"]
            if let unknown = match.keys.first(where: { !members.contains($0) }) {
                throw Invalid(
                    message:
                        "\"match\": unknown member \"\(unknown.prefix(64))\" (expected ignoreQuery, ignoreBodyFields, headers)"
                )
            }
            if let names = try Self.strings(match["ignoreQuery"], member: "match.ignoreQuery") {
                matching.ignoredQueryParameters = Set(names)
            }
            if let pointers = try Self.strings(match["ignoreBodyFields"], member: "match.ignoreBodyFields") {
                matching.ignoredBodyFields = try pointers.map { text throws(Invalid) in
                    guard !text.isEmpty, let pointer = JSONPointer(text) else {
                        throw Invalid(
                            message:
                                "\"match.ignoreBodyFields\": \"\(text.prefix(64))\" is not a JSON pointer such as /user/id"
                        )
                    }
                    return pointer
                }
            }
            if let headers = try Self.strings(match["headers"], member: "match.headers") {
                matching.matchedHeaders = headers.map { $0.lowercased() }
            }
        default:
            throw Invalid(message: "\"match\" must be an object: {\"ignoreQuery\", \"ignoreBodyFields\", \"headers\"}")
        }
    }

    /// A list of strings, or nil when the member is absent.
    private static func strings(_ value: JSONValue?, member: String) throws(Invalid) -> [String]? {
        switch value {
        case nil, .null?:
            return nil
        case .array(let items)?:
            guard items.count <= maximumListCount else {
                throw Invalid(message: "\"\(member)\" holds \(items.count) entries; at most \(maximumListCount)")
            }
            var strings: [String] = []
            for item in items {
                guard case .string(let text) = item, !text.isEmpty, text.utf8.count <= 1024 else {
                    throw Invalid(message: "\"\(member)\" must be a list of non-empty strings")
                }
                strings.append(text)
            }
            return strings
        default:
            throw Invalid(message: "\"\(member)\" must be a list of strings")
        }
    }
}
