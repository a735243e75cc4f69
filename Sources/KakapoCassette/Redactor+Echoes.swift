import KakapoGRPC
import KakapoHTTP
import KakapoJSON

/// Echoes given back (issue 42): a response that repeats a secret the request carried (a CSRF token in the
/// body, a header reflected by an echo server) is written with a placeholder that names where the request
/// carried it, `[REDACTED](request header x-csrf-token)`, the interaction lists that source among its
/// `echoSources`, and replay writes the live request's value from the same place in its stead
/// (`EchoReplay`), so a client that checks the echo still works.
///
/// A source is read the same way from the recorded request and from the live one, so a name given at
/// recording finds the live value at replay: `header NAME` (a header secret by its name), `header NAME
/// credential` (the part after `Bearer `), `cookie NAME`, `query NAME` and `form NAME` (the value as sent;
/// `decoded` percent-decoded, `spaced` with `+` read as a space too), `json POINTER`; a value found by its
/// shape inside another adds `#N`, its place among those found there. Bytes outside printable ASCII, and
/// those that would need escaping, are percent-encoded in a source. Secrets a request carries in other
/// places (XML, multipart, WebSocket messages, gRPC) and a response's own secrets keep the plain
/// placeholder; binary bodies and messages keep their same-length mask.
///
/// Where a response value is wholly an echo (a header, a JSON string) it is labelled before the response is
/// redacted by names, which then leaves the labelled placeholder as it is; an echo inside other text is
/// labelled by the echo pass that follows.
extension Redactor {
    /// What starts every placeholder that names an echo's source.
    public static let echoPlaceholderPrefix = "[REDACTED](request "

    /// The placeholder of a secret the request carried at `source`.
    static func echoPlaceholder(_ source: String) -> String { echoPlaceholderPrefix + source + ")" }

    /// Whether `text` is a placeholder, plain or naming an echo's source (`[REDACTED](request SOURCE)`, the
    /// source printable, without parentheses, at most 256 bytes): it is not redacted again.
    public static func isPlaceholder(_ text: String) -> Bool { isPlaceholder(text.utf8) }

    /// The same, for bytes.
    static func isPlaceholder<Bytes: BidirectionalCollection>(_ bytes: Bytes) -> Bool where Bytes.Element == UInt8 {
        if bytes.elementsEqual(placeholder.utf8) { return true }
        let prefix = echoPlaceholderPrefix.utf8
        guard bytes.count > prefix.count + 1, bytes.count <= prefix.count + 257, bytes.starts(with: prefix) else {
            return false
        }
        let source = bytes.dropFirst(prefix.count)
        guard source.last == UInt8(ascii: ")") else { return false }
        return source.dropLast().allSatisfy {
            $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "(") && $0 != UInt8(ascii: ")")
        }
    }

    /// The secrets `request` carries in its headers, cookies, query, form body and JSON body, each with the
    /// source that names where (see above), in the order they are read; every source is named once (a
    /// repeated one gets ` #2`...), and a value found in several places keeps the first.
    public func echoSources(of request: HTTP.Request) -> [(source: String, value: String)] {
        var sources = EchoSources()
        for field in request.headers {
            let name = field.name.lowercased()
            if isSecretHeader(field.name) {
                if name == "cookie" {
                    for pair in field.value.split(separator: ";") {
                        guard let equals = pair.firstIndex(of: "=") else { continue }
                        sources.add(
                            "cookie " + pair[..<equals].trimmingSpaces(), String(pair[pair.index(after: equals)...]))
                    }
                } else {
                    sources.add("header " + name, field.value)
                    if let space = field.value.firstIndex(of: " ") {
                        sources.add(
                            "header \(name) credential",
                            field.value[field.value.index(after: space)...].trimmingSpaces())
                    }
                }
            } else if byShape && !isKept(field.name) {
                sources.addShapes(in: field.value, at: "header " + name)
            }
        }
        addPairs(request.queryItems, as: "query", to: &sources)
        let contentType = request.headers["Content-Type"]?.lowercased() ?? ""
        if contentType.hasPrefix("application/x-www-form-urlencoded") {
            let content = ContentCoding.decoding(request.body, headers: request.headers).content
            addPairs(QueryItem.parse(String(decoding: content, as: UTF8.self)), as: "form", to: &sources)
        }
        if readsEveryBody || (byShape && CredentialValues.mightHoldCredential(request.body)),
            JSONParser.looksLikeContainer(request.body), let json = try? JSONParser.parse(request.body)
        {
            for pointer in jsonPointers {
                if let value = json[pointer: pointer]?.stringValue { sources.add("json \(pointer)", value) }
            }
            if byShape || allowlist != nil || !names.isEmpty {
                var path: [String] = []
                forEachSecret(in: json, name: nil, path: &path) { value, path, shaped in
                    let pointer = "json " + JSONPointer(components: path).description
                    if shaped {
                        sources.addShapes(in: value, at: pointer)
                    } else {
                        sources.add(pointer, value)
                    }
                }
            }
        }
        return sources.list
    }

    private func addPairs(_ items: [QueryItem], as kind: String, to sources: inout EchoSources) {
        for item in items {
            guard let value = item.value else { continue }
            let name = item.name.removingPercentEncodingLeniently()
            let plain = value.removingPercentEncodingLeniently()
            let source = "\(kind) \(name)"
            if isSecretQueryParameter(name) {
                // As sent first: given back into a URL, a decoded value could add parameters.
                sources.add(source, value)
                sources.add(source + " decoded", plain)
                sources.add(source + " spaced", Self.spaced(value))
            } else if byShape && !isKept(name) {
                sources.addShapes(in: plain, at: source)
            }
        }
    }

    /// A form or query value with `+` read as a space, then percent-decoded.
    static func spaced(_ value: String) -> String {
        value.replacingOccurrences(of: "+", with: " ").removingPercentEncodingLeniently()
    }

    /// Whether the response of `interaction` repeats one of the secrets `search` holds: in a header, its
    /// body (decoded) or its stream.
    static func responseEchoes(_ interaction: Interaction, _ search: EchoSearch) -> Bool {
        guard !search.isEmpty else { return false }
        let response = interaction.response
        if response.headers.contains(where: { search.occurs(in: Array($0.value.utf8)) }) { return true }
        if let chunks = interaction.chunks { return search.occurs(in: chunks.joinedBytes) }
        return search.occurs(in: ContentCoding.decoding(response.body, headers: response.headers).content)
    }

    /// The labels of a request's secrets for `EchoSearch`: each value by the source that names where the
    /// request carried it (the first, for a value carried in several places).
    func echoLabels(of request: HTTP.Request) -> [[UInt8]: String] {
        var labels: [[UInt8]: String] = [:]
        for (source, value) in echoSources(of: request) where labels[Array(value.utf8)] == nil {
            labels[Array(value.utf8)] = source
        }
        return labels
    }

    /// `response` with each header value, and each string of a JSON body, that is wholly one of the labelled
    /// secrets of `search` replaced by its labelled placeholder, before the response is redacted by names
    /// (which would write the plain one); `used` gathers the secrets replaced.
    func labellingWholeEchoes(
        in response: HTTP.Response, _ search: EchoSearch, used: inout Set<Int>, count: inout Int
    ) -> HTTP.Response {
        var copy = response
        var headers = HTTP.Headers()
        for field in response.headers {
            if let label = search.wholeLabel(of: Array(field.value.utf8)) {
                headers.add(name: field.name, value: String(decoding: label.placeholder, as: UTF8.self))
                used.insert(label.index)
                count += 1
            } else {
                headers.add(name: field.name, value: field.value)
            }
        }
        copy.headers = headers
        let contentType = response.headers["Content-Type"]?.lowercased() ?? ""
        guard Self.isText(contentType), !contentType.contains("xml") else { return copy }
        copy.body = Self.transformContent(response.body, headers: response.headers) { content in
            guard JSONParser.looksLikeContainer(content), let json = try? JSONParser.parse(content) else {
                return content
            }
            var changed = false
            let labelled = Self.labellingStrings(json, search, used: &used, changed: &changed)
            guard changed else { return content }
            count += 1
            return (JSONLayout.detect(content, value: json) ?? .compact).write(labelled)
        }
        return copy
    }

    /// `json` with each string that is wholly a labelled secret replaced by its placeholder.
    private static func labellingStrings(
        _ json: JSONValue, _ search: EchoSearch, used: inout Set<Int>, changed: inout Bool
    ) -> JSONValue {
        switch json {
        case .string(let text):
            guard let label = search.wholeLabel(of: Array(text.utf8)) else { return json }
            used.insert(label.index)
            changed = true
            return .string(String(decoding: label.placeholder, as: UTF8.self))
        case .object(let object):
            return .object(
                JSONObject(
                    object.members.map { ($0.key, labellingStrings($0.value, search, used: &used, changed: &changed)) })
            )
        case .array(let elements):
            return .array(elements.map { labellingStrings($0, search, used: &used, changed: &changed) })
        default:
            return json
        }
    }
}

/// Sources of a request's secrets, in order, each named once.
private struct EchoSources {
    private(set) var list: [(source: String, value: String)] = []
    private var named: [String: Int] = [:]

    /// Adds `value` at `source`, made safe to write inside a JSON string, XML or a header, and numbered
    /// when the name was taken; values too short to search for are named all the same, so numbering does
    /// not depend on them.
    mutating func add(_ source: String, _ value: String) {
        var name = Self.printable(source)
        let seen = named[name, default: 0] + 1
        named[name] = seen
        if seen > 1 { name += " #\(seen)" }
        guard !value.isEmpty, !Redactor.isPlaceholder(value) else { return }
        list.append((name, value))
    }

    /// Adds each secret-shaped part of `text`, numbered by its place among them.
    mutating func addShapes(in text: String, at source: String) {
        for (ordinal, value) in CredentialValues.values(in: text).enumerated() {
            add("\(source) #\(ordinal + 1)", value)
        }
    }

    /// `source` in printable ASCII that needs no escaping in JSON, XML or a header: other bytes, and `%`,
    /// percent-encoded, so two names stay two sources; at most 200 bytes.
    private static func printable(_ source: String) -> String {
        var kept: [UInt8] = []
        for byte in source.utf8 {
            guard kept.count < 200 else { break }
            if byte >= 0x20 && byte < 0x7F && !"\"\\()<>&'%".utf8.contains(byte) {
                kept.append(byte)
            } else {
                kept += Array("%".utf8) + hex(byte >> 4) + hex(byte & 0x0F)
            }
        }
        return String(decoding: kept, as: UTF8.self)
    }

    private static func hex(_ nibble: UInt8) -> [UInt8] { [nibble < 10 ? 0x30 + nibble : 0x37 + nibble] }
}
