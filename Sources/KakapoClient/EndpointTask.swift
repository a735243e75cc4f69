import Foundation
import KakapoHTTP

/// What a request carries.
public enum EndpointTask: Sendable {
    /// Nothing.
    case plain
    /// These bytes as the body.
    case data(Data)
    /// An `Encodable` as JSON, with `encoder` (a plain `JSONEncoder` with sorted keys by default).
    /// `Content-Type: application/json` unless the endpoint sets one.
    case json(any Encodable & Sendable, encoder: JSONEncoder? = nil)
    /// Parameters URL-encoded into the query or a form body, as `encoding` says.
    case parameters(Parameters, encoding: URLEncoding = URLEncoding())
    /// A body plus parameters in the query.
    case dataWithQuery(Data, query: Parameters, encoding: URLEncoding = URLEncoding(destination: .queryString))
    /// A JSON `Encodable` body plus parameters in the query.
    case jsonWithQuery(
        any Encodable & Sendable, query: Parameters, encoding: URLEncoding = URLEncoding(destination: .queryString))
    /// A `multipart/form-data` body of these parts.
    case multipart([MultipartPart])
}

/// Parameters for URL encoding: nested dictionaries become `a[b]=c`, arrays `a[]=1&a[]=2` (or `a=1&a=2`).
public typealias Parameters = [String: ParameterValue]

/// One parameter value.
public indirect enum ParameterValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case array([ParameterValue])
    case dictionary([String: ParameterValue])

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: ParameterValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, ParameterValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
}

/// How parameters are URL-encoded: keys sorted, `a[b]=c` for nested values, arrays with or without
/// brackets, booleans as 1/0 or true/false, everything but unreserved characters percent-encoded.
public struct URLEncoding: Sendable {
    /// Where the parameters go.
    public enum Destination: Sendable {
        /// The query for GET, HEAD and DELETE; a form body for the others.
        case methodDependent
        case queryString
        case httpBody
    }

    public enum ArrayEncoding: Sendable {
        /// `a[]=1&a[]=2`
        case brackets
        /// `a=1&a=2`
        case noBrackets
    }

    public enum BoolEncoding: Sendable {
        /// `1` and `0`
        case numeric
        /// `true` and `false`
        case literal
    }

    public var destination: Destination
    public var arrayEncoding: ArrayEncoding
    public var boolEncoding: BoolEncoding

    public init(
        destination: Destination = .methodDependent, arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric
    ) {
        self.destination = destination
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
    }

    /// `a=1&b%5B%5D=x...`, keys sorted.
    public func query(_ parameters: Parameters) -> String {
        var pairs: [(String, String)] = []
        for key in parameters.keys.sorted() { append(key, parameters[key]!, to: &pairs) }
        return pairs.map { $0.0.percentEncodedForQuery() + "=" + $0.1.percentEncodedForQuery() }.joined(separator: "&")
    }

    /// Whether parameters of a request with `method` go into the query.
    func usesQuery(for method: EndpointMethod) -> Bool {
        switch destination {
        case .queryString: return true
        case .httpBody: return false
        case .methodDependent: return method == .get || method == .head || method == .delete
        }
    }

    private func append(_ key: String, _ value: ParameterValue, to pairs: inout [(String, String)]) {
        switch value {
        case .string(let text): pairs.append((key, text))
        case .int(let number): pairs.append((key, String(number)))
        case .double(let number): pairs.append((key, String(number)))
        case .bool(let flag):
            pairs.append((key, boolEncoding == .numeric ? (flag ? "1" : "0") : (flag ? "true" : "false")))
        case .array(let elements):
            for element in elements { append(arrayEncoding == .brackets ? key + "[]" : key, element, to: &pairs) }
        case .dictionary(let members):
            for name in members.keys.sorted() { append(key + "[" + name + "]", members[name]!, to: &pairs) }
        }
    }

}

/// One part of a `multipart/form-data` body.
public struct MultipartPart: Sendable {
    public var name: String
    public var data: Data
    public var fileName: String?
    public var mimeType: String?

    public init(name: String, data: Data, fileName: String? = nil, mimeType: String? = nil) {
        self.name = name
        self.data = data
        self.fileName = fileName
        self.mimeType = mimeType
    }

    /// A text field.
    public init(name: String, value: String) { self.init(name: name, data: Data(value.utf8)) }
}
