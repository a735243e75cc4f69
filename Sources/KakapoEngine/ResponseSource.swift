/// Which layer of the pipeline answered a request; sent as `X-Kakapo-Source` and counted in the summary.
public enum ResponseSource: String, Sendable, CaseIterable {
    case admin
    case route
    case store
    case cassette
    /// A `HEAD` answered from a `GET` recording: its status and headers, no body.
    case cassetteHead = "cassette-head"
    case upstream
    /// Forwarded and answered live, unrecorded, in a mode that records: a record filter
    /// (`--record-only`, `--passthrough`) keeps the request out of the cassette.
    case passthrough
    case miss
    /// The upstream failed (502 or 504) or the request was refused (413 and the like).
    case error
}

extension ResponseSource {
    /// The case's place in `allCases`, for tables indexed by source.
    var ordinal: Int {
        switch self {
        case .admin: 0
        case .route: 1
        case .store: 2
        case .cassette: 3
        case .cassetteHead: 4
        case .upstream: 5
        case .passthrough: 6
        case .miss: 7
        case .error: 8
        }
    }
}
