import Foundation
import KakapoHTTP

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HTTP.Request {
    /// The request a `URLRequest` would put on the wire: method, path and query as encoded, its headers
    /// with `Host` from the URL, and the body from `httpBody` or read whole from `httpBodyStream`.
    init(_ request: URLRequest) throws {
        guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            throw URLError(.badURL)
        }
        var target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { target += "?" + query }
        var headers = HTTP.Headers()
        if let host = components.host {
            headers.add(name: "Host", value: host + (components.port.map { ":\($0)" } ?? ""))
        }
        for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key })
        where !name.caseInsensitiveEquals("Host") {
            headers.add(name: name, value: value)
        }
        var body = request.httpBody.map { Array($0) } ?? []
        if body.isEmpty, let stream = request.httpBodyStream {
            body = try HTTP.Request.read(stream)
        }
        self.init(method: HTTP.Method(request.httpMethod ?? "GET"), target: target, headers: headers, body: body)
    }

    /// Everything `stream` holds.
    private static func read(_ stream: InputStream) throws -> [UInt8] {
        stream.open()
        defer { stream.close() }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count < 0 { throw stream.streamError ?? URLError(.cannotDecodeRawData) }
            if count == 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return bytes
    }
}
