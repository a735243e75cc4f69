import Foundation
import KakapoHTTP

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Endpoint {
    /// The request this endpoint describes: the base URL plus the path (each segment percent-encoded),
    /// the method, headers and the task's body and query.
    public func urlRequest() throws(ClientError) -> URLRequest {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) else {
            throw .requestMapping("\(baseURL) is not a valid base URL")
        }
        let basePath =
            components.percentEncodedPath.hasSuffix("/")
            ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map {
            String($0).percentEncodedForPathSegment()
        }
        let encodedPath = segments.joined(separator: "/")
        components.percentEncodedPath =
            basePath + (encodedPath.hasPrefix("/") || encodedPath.isEmpty ? "" : "/") + encodedPath
        var body: Data?
        var contentType: String?
        var query: String?
        switch task {
        case .plain:
            break
        case .data(let data):
            body = data
        case .json(let value, let encoder):
            body = try Self.encode(value, encoder)
            contentType = "application/json"
        case .parameters(let parameters, let encoding):
            let encoded = encoding.query(parameters)
            if encoding.usesQuery(for: method) {
                query = encoded
            } else {
                body = Data(encoded.utf8)
                contentType = "application/x-www-form-urlencoded; charset=utf-8"
            }
        case .dataWithQuery(let data, let parameters, let encoding):
            body = data
            query = encoding.query(parameters)
        case .jsonWithQuery(let value, let parameters, let encoding):
            body = try Self.encode(value, nil)
            contentType = "application/json"
            query = encoding.query(parameters)
        case .multipart(let parts):
            let boundary = "kakapo-" + UUID().uuidString
            body = Self.multipartBody(parts, boundary: boundary)
            contentType = "multipart/form-data; boundary=\(boundary)"
        }
        if let query, !query.isEmpty {
            components.percentEncodedQuery = [components.percentEncodedQuery, query].compactMap { $0 }.joined(
                separator: "&")
        }
        guard let url = components.url else { throw .requestMapping("no valid URL for \(baseURL) and \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method.rawValue
        for (name, value) in headers ?? [:] { request.setValue(value, forHTTPHeaderField: name) }
        if let contentType, request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        request.httpBody = body
        return request
    }

    private static func encode(_ value: any Encodable, _ encoder: JSONEncoder?) throws(ClientError) -> Data {
        do {
            return try (encoder ?? JSONEncoder.sorted).encode(value)
        } catch {
            throw .encodableMapping(error)
        }
    }

    static func multipartBody(_ parts: [MultipartPart], boundary: String) -> Data {
        var body = Data()
        for part in parts {
            var disposition = "Content-Disposition: form-data; name=\"\(part.name)\""
            if let fileName = part.fileName { disposition += "; filename=\"\(fileName)\"" }
            body.append(Data("--\(boundary)\r\n\(disposition)\r\n".utf8))
            if let mimeType = part.mimeType { body.append(Data("Content-Type: \(mimeType)\r\n".utf8)) }
            body.append(Data("\r\n".utf8))
            body.append(part.data)
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        return body
    }
}

extension JSONEncoder {
    /// A plain encoder with sorted keys, so the same value always gives the same bytes.
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
