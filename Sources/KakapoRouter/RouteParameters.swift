import KakapoHTTP

/// The values a route pattern captured, percent-decoded: `:name` parameters by name, and the segments
/// matched by `**`.
public struct RouteParameters: Hashable, Sendable {
    private var values: [String: String]
    /// The segments matched by a trailing `**`, if the pattern has one.
    public private(set) var catchAll: [String]

    init(values: [String: String] = [:], catchAll: [String] = []) {
        self.values = values
        self.catchAll = catchAll
    }

    /// The value of `:name`, or nil when the pattern has no such parameter.
    public subscript(name: String) -> String? { values[name] }

    /// The value of `:name`; throws when the route has no such parameter (a mistake in the handler).
    public func require(_ name: String) throws(RouterError) -> String {
        guard let value = values[name] else {
            throw RouterError(code: .missingParameter, message: "the route has no parameter ':\(name)'")
        }
        return value
    }

    /// `require(name)` converted with `init?(_:)`: `try request.parameters.require("id", as: Int.self)`.
    public func require<T: LosslessStringConvertible>(_ name: String, as type: T.Type) throws -> T {
        let text = try require(name)
        guard let value = T(text) else {
            throw HTTPError(status: 400, message: "path parameter '\(name)' must be \(T.self), not \"\(text)\"")
        }
        return value
    }

    public var names: [String] { values.keys.sorted() }
}
