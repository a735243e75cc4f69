import KakapoHTTP
import KakapoJSON

/// JSON-RPC 2.0 requests as matching, replay and `kakapo cassette show` see them. A body is JSON-RPC when it
/// is an object with `"jsonrpc": "2.0"` and a string `method` (a request, or a notification when it has no
/// `id`), or a non-empty array of such objects (a batch).
public enum JSONRPCMessage {
    /// What stands for any `id` in matching: the client numbers its requests, so the number is left out, but
    /// a request (with an `id`) and a notification (without one) stay apart.
    static let anyID = JSONValue.string("(any id)")

    /// What stands for any MCP progress token (`params._meta.progressToken`) in matching: the client chooses
    /// it, as it chooses ids, and replay gives it back in the progress notifications (`JSONRPCReplay`).
    static let anyProgressToken = JSONValue.string("(any progress token)")

    /// `json` as it is compared with recordings: a JSON-RPC request's `id` and MCP progress token (each
    /// element's in a batch) are left out; any other value is returned as it is, after one look at its first
    /// member or element.
    package static func forMatching(_ json: JSONValue) -> JSONValue {
        guard let requests = requests(in: json) else { return json }
        let anonymous: [JSONValue] = requests.map { request in
            var copy = request
            if request["id"] != nil { copy["id"] = anyID }
            if progressToken(of: request) != nil, var params = request["params"]?.objectValue,
                var meta = params["_meta"]?.objectValue
            {
                meta["progressToken"] = anyProgressToken
                params["_meta"] = .object(meta)
                copy["params"] = .object(params)
            }
            return .object(copy)
        }
        if case .array = json { return .array(anonymous) }
        return anonymous[0]
    }

    /// The JSON-RPC requests `json` holds: itself when it is one, the elements of a batch; nil when it is not
    /// JSON-RPC. A batch is looked at element by element only once its first element is a request.
    package static func requests(in json: JSONValue) -> [JSONObject]? {
        switch json {
        case .object(let object):
            return isRequest(object) ? [object] : nil
        case .array(let elements):
            guard let first = elements.first?.objectValue, isRequest(first) else { return nil }
            var requests: [JSONObject] = []
            requests.reserveCapacity(elements.count)
            for element in elements {
                guard let object = element.objectValue, isRequest(object) else { return nil }
                requests.append(object)
            }
            return requests
        default:
            return nil
        }
    }

    /// The JSON-RPC requests a body holds, found cheaply: a body that is not a JSON container, or does not
    /// hold the bytes `"jsonrpc"`, is never parsed. Nil when it is not JSON-RPC.
    package static func requests(inBody body: [UInt8]) -> [JSONObject]? {
        guard JSONParser.looksLikeContainer(body), mentionsJSONRPC(body), let json = try? JSONParser.parse(body)
        else { return nil }
        return requests(in: json)
    }

    /// The MCP progress token of a request (`params._meta.progressToken`), if it has one.
    package static func progressToken(of request: JSONObject) -> JSONValue? {
        request["params"]?.objectValue?["_meta"]?.objectValue?["progressToken"]
    }

    /// Whether `object` is a JSON-RPC 2.0 request or notification.
    package static func isRequest(_ object: JSONObject) -> Bool {
        object["jsonrpc"] == .string("2.0") && object["method"]?.stringValue != nil
    }

    /// Whether two bodies as matching sees them are JSON-RPC calls of other methods (for a batch, other
    /// methods in order), so a miss report can rank recordings of the live request's own method first.
    package static func isOtherCall(_ recorded: JSONValue, than live: JSONValue) -> Bool {
        guard let recordedCalls = requests(in: recorded), let liveCalls = requests(in: live) else { return false }
        return !recordedCalls.map { $0["method"] }.elementsEqual(liveCalls.map { $0["method"] })
    }

    /// What `kakapo cassette show` prints next to the URL of a JSON-RPC request: `jsonrpc tools/call`,
    /// `jsonrpc notification notifications/initialized`, `jsonrpc batch: initialize, tools/list`; nil for
    /// any other request. Method names are cut at 64 characters, control characters shown as `?`, and a batch
    /// names its first 5.
    public static func label(for request: HTTP.Request) -> String? {
        let body = ContentCoding.decoding(request.body, headers: request.headers).content
        guard let requests = requests(inBody: body) else { return nil }
        let methods = requests.prefix(5).map { request in
            // A method name comes from the cassette: no control character reaches the terminal.
            String(
                (request["method"]?.stringValue ?? "").prefix(64).map {
                    $0.unicodeScalars.contains { $0.properties.generalCategory == .control } ? "?" : $0
                })
        }
        guard requests.count > 1 || body.first(where: { $0 > 0x20 }) == UInt8(ascii: "[") else {
            return requests[0]["id"] == nil ? "jsonrpc notification \(methods[0])" : "jsonrpc \(methods[0])"
        }
        let more = requests.count > methods.count ? ", … (\(requests.count) in all)" : ""
        return "jsonrpc batch: " + methods.joined(separator: ", ") + more
    }

    /// Whether `body` holds the bytes `"jsonrpc"` anywhere.
    private static func mentionsJSONRPC(_ body: [UInt8]) -> Bool {
        let needle = Array(#""jsonrpc""#.utf8)
        guard body.count >= needle.count else { return false }
        return body.withUnsafeBufferPointer { bytes in
            var index = 0
            let last = bytes.count - needle.count
            while index <= last {
                if bytes[index] == needle[0], bytes[index + 1] == needle[1] {
                    var matched = 2
                    while matched < needle.count, bytes[index + matched] == needle[matched] { matched += 1 }
                    if matched == needle.count { return true }
                }
                index += 1
            }
            return false
        }
    }
}
