/// Which layer of the pipeline answered a request; sent as `X-Kakapo-Source` and counted in the summary.
public enum ResponseSource: String, Sendable, CaseIterable {
    case admin
    case route
    case store
    case cassette
    case upstream
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
        case .upstream: 4
        case .miss: 5
        case .error: 6
        }
    }
}
