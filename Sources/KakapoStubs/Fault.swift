/// What a route breaks instead of answering, to test how a client copes.
public enum Fault: Hashable, Sendable {
    /// How the connection fails.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// The connection is reset (TCP RST) with no answer.
        case connectionReset = "connection-reset"
        /// The connection is closed with no bytes sent.
        case emptyResponse = "empty-response"
        /// Bytes that are not HTTP, then the connection is closed.
        case malformedResponse = "malformed-response"
    }

    /// The connection fails, in `rate` of calls (1 for always).
    case connection(Kind, rate: Double)
    /// `rate` of calls answer `status` instead of the route's response.
    case status(Int, rate: Double)

    /// Reads `"connection-reset"`, `{"type": "empty-response", "rate": 0.5}` or `{"status": 503, "rate": 0.2}`.
    init(_ node: DefinitionNode) throws(RoutesError) {
        let kinds = Kind.allCases.map(\.rawValue).joined(separator: ", ")
        if case .string(let name) = node.value {
            guard let kind = Kind(rawValue: name) else {
                throw node.error(
                    "unknown fault \"\(name)\"; expected one of \(kinds), or {\"status\": 503, \"rate\": 0.2}")
            }
            self = .connection(kind, rate: 1)
            return
        }
        let object = try node.object(allowed: ["type", "status", "rate"])
        var rate = 1.0
        if let node = object["rate"] {
            rate = try node.number()
            guard (0...1).contains(rate) else { throw node.error("expected a number from 0 to 1") }
        }
        let (key, value) = try object.exactlyOne(of: ["type", "status"], what: "a fault")
        if key == "status" {
            self = .status(try value.integer(in: 100...599, "an integer from 100 to 599"), rate: rate)
        } else {
            guard let kind = Kind(rawValue: try value.string()) else {
                throw value.error("unknown fault type; expected one of \(kinds)")
            }
            self = .connection(kind, rate: rate)
        }
    }

    var rate: Double {
        switch self {
        case .connection(_, let rate), .status(_, let rate): return rate
        }
    }

    /// Whether this call fails.
    func strikes() -> Bool { rate >= 1 || (rate > 0 && Double.random(in: 0..<1) < rate) }
}
