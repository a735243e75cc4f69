import Foundation

/// One endpoint of an API, usually a case of an enum: where it is, how it is called and what it sends.
///
/// ```swift
/// enum DemoAPI: Endpoint {
///     case user(id: String), createUser(name: String)
///     var baseURL: URL { URL(string: "http://127.0.0.1:9000")! }
///     var path: String { switch self { case .user(let id): "/users/\(id)"; case .createUser: "/users" } }
///     var method: EndpointMethod { if case .createUser = self { .post } else { .get } }
///     var task: EndpointTask { if case .createUser(let name) = self { .json(["name": name]) } else { .plain } }
/// }
/// ```
public protocol Endpoint: Sendable {
    /// The API's base URL; `path` is appended to it.
    var baseURL: URL { get }
    /// The path, unescaped: it is percent-encoded segment by segment when the URL is built.
    var path: String { get }
    var method: EndpointMethod { get }
    /// What the request carries.
    var task: EndpointTask { get }
    /// Headers of this endpoint (the client's middleware may add more).
    var headers: [String: String]? { get }
    /// Which statuses are a success; the others throw `ClientError.statusCode`.
    var validation: Validation { get }
    /// The body a stubbed answer carries.
    var sampleData: Data { get }
    /// The status a stubbed answer carries.
    var sampleStatus: Int { get }
}

extension Endpoint {
    public var headers: [String: String]? { nil }
    public var validation: Validation { .none }
    public var sampleData: Data { Data() }
    public var sampleStatus: Int { 200 }
}

/// The HTTP methods an endpoint may use.
public enum EndpointMethod: String, Sendable, CaseIterable {
    case get = "GET", post = "POST", put = "PUT", patch = "PATCH", delete = "DELETE", head = "HEAD"
}

/// Which statuses count as success.
public enum Validation: Sendable, Equatable {
    /// Every status is accepted.
    case none
    /// 200-299.
    case successCodes
    /// 200-399.
    case successAndRedirectCodes
    /// Exactly these.
    case customCodes([Int])

    /// True when `status` passes.
    public func accepts(_ status: Int) -> Bool {
        switch self {
        case .none: return true
        case .successCodes: return (200..<300).contains(status)
        case .successAndRedirectCodes: return (200..<400).contains(status)
        case .customCodes(let codes): return codes.contains(status)
        }
    }
}
