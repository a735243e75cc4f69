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
