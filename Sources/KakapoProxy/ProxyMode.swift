/// What the proxy does with a request, by whether the cassette has it (design 5.2, the VCR vocabulary).
public enum ProxyMode: String, Sendable, CaseIterable {
    /// Replay only: a hit replays, a miss is a miss. Never touches the network.
    case none
    /// A hit replays; a miss is forwarded upstream, recorded and answered.
    case new
    /// Everything is forwarded and recorded, replacing earlier recordings of the same request.
    case all
    /// Everything is forwarded; nothing is recorded.
    case passthrough

    /// True when this mode may forward requests upstream.
    public var usesUpstream: Bool { self != .none }
    /// True when this mode writes the cassette.
    public var records: Bool { self == .new || self == .all }
}
