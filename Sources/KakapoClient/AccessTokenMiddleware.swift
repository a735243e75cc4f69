import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How an endpoint wants to be authorized.
public enum AuthorizationType: Sendable, Equatable {
    /// `Authorization: Basic <token>` (the token is the base64 of `user:password`).
    case basic
    /// `Authorization: Bearer <token>`
    case bearer
    /// `Authorization: <scheme> <token>`
    case custom(String)

    var scheme: String {
        switch self {
        case .basic: return "Basic"
        case .bearer: return "Bearer"
        case .custom(let scheme): return scheme
        }
    }
}

/// An endpoint that may ask for an access token; nil (the default) asks for none.
public protocol AccessTokenAuthorizable {
    var authorizationType: AuthorizationType? { get }
}

/// Adds `Authorization` to the requests of endpoints that ask for it (`AccessTokenAuthorizable`).
public struct AccessTokenMiddleware: Middleware {
    public let token: @Sendable (any Endpoint) -> String

    /// `token` is asked for each request, so a refreshed token is used at once.
    public init(token: @escaping @Sendable (any Endpoint) -> String) { self.token = token }

    public func prepare(_ request: URLRequest, endpoint: any Endpoint) -> URLRequest {
        guard let authorizable = endpoint as? any AccessTokenAuthorizable,
            let type = authorizable.authorizationType
        else { return request }
        var request = request
        request.setValue(type.scheme + " " + token(endpoint), forHTTPHeaderField: "Authorization")
        return request
    }
}
