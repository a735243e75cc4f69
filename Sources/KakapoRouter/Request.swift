import Foundation
import KakapoHTTP
import KakapoJSON

/// The request a route handler gets: path parameters, decoded query items, headers and the body.
public struct Request: Sendable {
    /// The request as it arrived.
    public let http: HTTP.Request
    /// The path relative to the router's base URL.
    public let path: String
    public let parameters: RouteParameters

    public init(http: HTTP.Request, path: String, parameters: RouteParameters) {
        self.http = http
        self.path = path
        self.parameters = parameters
    }

    public var method: HTTP.Method { http.method }
    public var headers: HTTP.Headers { http.headers }
    /// The body bytes.
    public var body: [UInt8] { http.body }
    /// The body as UTF-8 text.
    public var text: String { String(decoding: http.body, as: UTF8.self) }

    /// The query items in order, percent-decoded (`+` is a space).
    public var queryItems: [QueryItem] { http.decodedQueryItems }

    /// The first value of the query parameter `name`.
    public func query(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// The body parsed as JSON; throws a 400-class error naming the line and column when it is not.
    public func json() throws -> JSONValue {
        do {
            return try JSONParser.parse(http.body)
        } catch {
            throw RouterError(code: .invalidBody, message: "the request body is not valid JSON: \(error)")
        }
    }

    /// The body decoded from JSON as `T`; throws a 400-class error saying what did not fit.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(http.body))
        } catch {
            throw RouterError(
                code: .invalidBody, message: "the request body is not a valid \(T.self): \(describe(error))")
        }
    }

    private func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing \"\(key.stringValue)\"" + at(context.codingPath)
        case .typeMismatch(let type, let context):
            return "expected \(type)" + at(context.codingPath)
        case .valueNotFound(let type, let context):
            return "expected \(type), found null" + at(context.codingPath)
        case .dataCorrupted(let context):
            return context.debugDescription + at(context.codingPath)
        @unknown default:
            return "\(error)"
        }
    }

    private func at(_ path: [any CodingKey]) -> String {
        path.isEmpty ? "" : " at " + path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }
}
