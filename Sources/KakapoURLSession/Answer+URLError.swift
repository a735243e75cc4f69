import Foundation
import KakapoEngine
import KakapoUpstream

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Answer {
    /// The `URLError` a client over a socket would have seen, for a route's fault or an upstream failure;
    /// nil for an answer.
    var urlError: URLError? {
        if case .fault(let kind) = outcome {
            switch kind {
            case .connectionReset, .emptyResponse: return URLError(.networkConnectionLost)
            case .malformedResponse: return URLError(.badServerResponse)
            }
        }
        guard let error = upstreamError else { return nil }
        switch error.code {
        // Out of descriptors, no connection could be made: as a client out of them would see it.
        case .connectionFailed, .outOfDescriptors: return URLError(.cannotConnectToHost)
        case .dnsFailure: return URLError(.cannotFindHost)
        case .timeout: return URLError(.timedOut)
        case .tlsFailure: return URLError(.secureConnectionFailed)
        case .connectionLost: return URLError(.networkConnectionLost)
        case .invalidURL: return URLError(.badURL)
        default: return URLError(.badServerResponse)
        }
    }
}
