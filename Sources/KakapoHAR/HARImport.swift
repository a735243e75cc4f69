import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON

/// Reads HAR 1.2 (what browsers' devtools, mitmproxy, Charles, Proxyman and Polly.js write) into a cassette:
/// entries in order, text and base64 bodies, missing optional fields tolerated, pages and `_`-prefixed
/// extensions ignored but Kakapo's own `_chunks` (and `_brokenOff`, `_abandoned`) and Chrome's `_webSocketMessages` (with
/// Kakapo's `_webSocketClose`, `HARWebSocket`), HTTP/2 pseudo-headers dropped. Bodies are made to agree
/// with their `Content-Encoding` as `HARResponseContent` says, and the report tells what that changed.
public enum HARImport {
    /// The cassette `bytes` (a HAR document read from `file`) describes, before redaction.
    public static func cassette(from bytes: [UInt8], file: String) throws(HARError) -> Cassette {
        try read(bytes, file: file).cassette
    }

    /// The cassette `bytes` (a HAR document read from `file`) describes, before redaction, with what the
    /// import changed so that it replays (codings dropped or written again, lengths fixed).
    public static func read(_ bytes: [UInt8], file: String) throws(HARError) -> (
        cassette: Cassette, report: HARImportReport
    ) {
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            throw HARError(
                file: file, path: [], message: error.message, line: error.line, column: error.column, code: .syntax,
                cause: error)
        }
        do {
            let entries = try Node(root, []).member("log").member("entries").array()
            var report = HARImportReport()
            let interactions = try entries.map { try interaction($0, report: &report) }
            return (Cassette(interactions: interactions), report)
        } catch let failure as Failure {
            // A missing member has no position: point at the nearest parent that has one.
            var path = failure.path
            var position = JSONParser.location(of: path, in: bytes)
            while position == nil && !path.isEmpty {
                path.removeLast()
                position = JSONParser.location(of: path, in: bytes)
            }
            throw HARError(
                file: file, path: failure.path, message: failure.message, line: position?.line, column: position?.column
            )
        } catch {
            throw HARError(file: file, path: [], message: "\(error)", cause: error)
        }
    }

    private static func interaction(_ entry: Node, report: inout HARImportReport) throws -> Interaction {
        let request = try entry.member("request")
        let response = try entry.member("response")
        let url = try request.member("url").string()
        guard let components = URLComponents(string: url), let host = components.host else {
            throw try request.member("url").failure("expected an absolute http(s) URL, not \"\(url)\"")
        }
        var target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { target += "?" + query }
        var requestHeaders = try headers(request)
        if !requestHeaders.contains("Host") {
            requestHeaders.add(name: "Host", value: host + (components.port.map { ":\($0)" } ?? ""))
        }
        var requestBody: [UInt8] = []
        if let postData = request.optional("postData"), let text = try postData.optional("text")?.string() {
            requestBody = try body(text, encoding: postData.optional("encoding")?.string(), at: postData)
        }
        let status = try response.member("status").integer()
        guard (100...599).contains(status) else {
            throw try response.member("status").failure("expected an HTTP status from 100 to 599, not \(status)")
        }
        let responseHeaders = try headers(response)
        let content = try HARResponseContent.read(response, headers: responseHeaders, report: &report)
        let milliseconds =
            try entry.optional("time").map { node in
                let value = try node.number()
                // A duration too large to write back (1e300) is refused where it is read, as a cassette's is.
                guard value <= Double(CassetteCodec.largestMilliseconds) else {
                    throw node.failure(
                        "expected milliseconds from 0 to \(CassetteCodec.largestMilliseconds) (a week), not \(value)")
                }
                return value
            } ?? 0
        // A WebSocket's ws: and wss: URLs name the http: and https: origin its upgrade went to.
        var scheme = components.scheme?.lowercased() ?? "http"
        if scheme == "ws" || scheme == "wss" { scheme = scheme == "wss" ? "https" : "http" }
        var interaction = Interaction(
            request: HTTP.Request(
                method: HTTP.Method(try request.member("method").string().uppercased()), target: target,
                headers: requestHeaders, body: requestBody,
                origin: RequestOrigin.make(scheme: scheme, host: host, port: components.port)),
            response: HTTP.Response(status: status, headers: content.headers, body: content.body),
            recordedAt: try entry.optional("startedDateTime")?.string() ?? "",
            durationMilliseconds: max(0, milliseconds), chunks: content.chunks, brokenOff: content.brokenOff,
            abandoned: content.abandoned)
        interaction.webSocket = try HARWebSocket.read(
            entry, status: status, headers: responseHeaders, start: interaction.recordedDate, report: &report)
        return interaction
    }

    private static func headers(_ message: Node) throws -> HTTP.Headers {
        var result = HTTP.Headers()
        for header in try message.optional("headers")?.array() ?? [] {
            let name = try header.member("name").string()
            if name.hasPrefix(":") { continue }
            result.add(name: name, value: try header.member("value").string())
        }
        return result
    }

    static func body(_ text: String, encoding: String?, at node: Node) throws -> [UInt8] {
        guard encoding == "base64" else { return Array(text.utf8) }
        guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
            throw Failure(path: node.path + [.key("text")], message: "not valid base64")
        }
        return Array(data)
    }

    /// A HAR value with its path, for messages.
    struct Node {
        let value: JSONValue
        let path: [JSONPathComponent]

        init(_ value: JSONValue, _ path: [JSONPathComponent]) {
            self.value = value
            self.path = path
        }

        func failure(_ message: String) -> Failure { Failure(path: path, message: message) }

        func member(_ key: String) throws -> Node {
            guard case .object(let object) = value else {
                throw failure("expected an object, found \(value.kindDescription)")
            }
            guard let member = object[key] else { throw Failure(path: path + [.key(key)], message: "missing") }
            return Node(member, path + [.key(key)])
        }

        func optional(_ key: String) -> Node? {
            guard case .object(let object) = value, let member = object[key], member != .null else { return nil }
            return Node(member, path + [.key(key)])
        }

        func array() throws -> [Node] {
            guard case .array(let elements) = value else {
                throw failure("expected an array, found \(value.kindDescription)")
            }
            return elements.enumerated().map { Node($0.element, path + [.index($0.offset)]) }
        }

        func string() throws -> String {
            guard case .string(let text) = value else {
                throw failure("expected a string, found \(value.kindDescription)")
            }
            return text
        }

        func number() throws -> Double {
            guard case .number(let number) = value else {
                throw failure("expected a number, found \(value.kindDescription)")
            }
            return number.doubleValue
        }

        func integer() throws -> Int {
            guard case .number(let number) = value, let integer = number.intValue ?? Int(exactly: number.doubleValue)
            else { throw failure("expected a whole number, found \(value.kindDescription)") }
            return integer
        }
    }

    struct Failure: Error {
        let path: [JSONPathComponent]
        let message: String
    }
}
