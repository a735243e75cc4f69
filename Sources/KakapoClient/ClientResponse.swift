import Foundation
import KakapoJSON

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An answer: status, headers, body, and the request that got it.
public struct ClientResponse: Sendable {
    public let statusCode: Int
    public let data: Data
    /// The request as sent (after middleware).
    public let request: URLRequest?
    /// Foundation's response (nil for none).
    public let response: HTTPURLResponse?

    public init(statusCode: Int, data: Data, request: URLRequest?, response: HTTPURLResponse?) {
        self.statusCode = statusCode
        self.data = data
        self.request = request
        self.response = response
    }

    /// A header of the answer, any case.
    public func header(_ name: String) -> String? { response?.value(forHTTPHeaderField: name) }

    /// Itself when the status is in `codes`; `ClientError.statusCode` otherwise.
    public func filter(statusCodes codes: ClosedRange<Int>) throws(ClientError) -> ClientResponse {
        guard codes.contains(statusCode) else { throw .statusCode(self) }
        return self
    }

    public func filter(statusCode code: Int) throws(ClientError) -> ClientResponse {
        try filter(statusCodes: code...code)
    }

    public func filterSuccessfulStatusCodes() throws(ClientError) -> ClientResponse {
        try filter(statusCodes: 200...299)
    }

    public func filterSuccessfulStatusAndRedirectCodes() throws(ClientError) -> ClientResponse {
        try filter(statusCodes: 200...399)
    }

    /// The body as JSON, or the value at `keyPath` (`"data.users.0"`: keys and array indices).
    public func json(atKeyPath keyPath: String? = nil) throws(ClientError) -> JSONValue {
        guard let root = try? JSONParser.parse(Array(data)) else { throw .jsonMapping(self) }
        guard let keyPath, !keyPath.isEmpty else { return root }
        guard let value = root[pointer: JSONPointer(components: keyPath.split(separator: ".").map(String.init))] else {
            throw .jsonMapping(self)
        }
        return value
    }

    /// The body as UTF-8 text, or the string at `keyPath` in the JSON body.
    public func string(atKeyPath keyPath: String? = nil) throws(ClientError) -> String {
        guard let keyPath else {
            guard let text = String(data: data, encoding: .utf8) else { throw .stringMapping(self) }
            return text
        }
        guard case .string(let text) = try? json(atKeyPath: keyPath) else { throw .stringMapping(self) }
        return text
    }

    /// The body, or the value at `keyPath`, decoded as `T`.
    public func decode<T: Decodable>(
        _ type: T.Type = T.self, atKeyPath keyPath: String? = nil, using decoder: JSONDecoder = JSONDecoder()
    ) throws(ClientError) -> T {
        var bytes = data
        if let keyPath, !keyPath.isEmpty {
            let value: JSONValue
            do {
                value = try json(atKeyPath: keyPath)
            } catch {
                throw .objectMapping(error, self)
            }
            bytes = Data(JSONWriter().write(value))
        }
        do {
            return try decoder.decode(T.self, from: bytes)
        } catch {
            throw .objectMapping(error, self)
        }
    }
}
