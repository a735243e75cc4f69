import Foundation

/// Everything that can go wrong with a request, one case per failure, each with a message that says what
/// happened; the cases that have a response carry it.
public enum ClientError: Error, CustomStringConvertible {
    /// The endpoint's URL could not be built.
    case requestMapping(String)
    /// The parameters could not be encoded.
    case parameterEncoding(any Error)
    /// The `Encodable` body could not be encoded.
    case encodableMapping(any Error)
    /// The status failed the endpoint's validation.
    case statusCode(ClientResponse)
    /// The request failed on the network (or was cancelled: the error is then a `CancellationError`).
    case underlying(any Error, ClientResponse?)
    /// The body is not JSON (or has no value at the key path).
    case jsonMapping(ClientResponse)
    /// The body is not a string (or has none at the key path).
    case stringMapping(ClientResponse)
    /// The body did not decode as the type asked for.
    case objectMapping(any Error, ClientResponse)

    /// The response, when the failure came with one.
    public var response: ClientResponse? {
        switch self {
        case .statusCode(let response), .jsonMapping(let response), .stringMapping(let response),
            .objectMapping(_, let response):
            return response
        case .underlying(_, let response): return response
        case .requestMapping, .parameterEncoding, .encodableMapping: return nil
        }
    }

    /// True when the request was cancelled.
    public var isCancellation: Bool {
        if case .underlying(let error, _) = self {
            return error is CancellationError || (error as? URLError)?.code == .cancelled
        }
        return false
    }

    public var description: String {
        switch self {
        case .requestMapping(let reason): return "the request could not be built: \(reason)"
        case .parameterEncoding(let error): return "the parameters could not be encoded: \(error)"
        case .encodableMapping(let error): return "the body could not be encoded as JSON: \(error)"
        case .statusCode(let response):
            return
                "status \(response.statusCode) is not accepted for \(response.request?.url?.absoluteString ?? "the request")"
        case .underlying(let error, _): return "the request failed: \(error)"
        case .jsonMapping(let response): return "the body (\(response.data.count) bytes) is not the JSON expected"
        case .stringMapping(let response): return "the body (\(response.data.count) bytes) is not the string expected"
        case .objectMapping(let error, _): return "the body could not be decoded: \(error)"
        }
    }
}

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
