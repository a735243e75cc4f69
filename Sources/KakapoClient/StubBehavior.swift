import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where a client's answers come from.
public enum StubBehavior: Sendable {
    /// The network, through the client's session.
    case never
    /// The endpoint's `sampleStatus` and `sampleData`, at once.
    case immediate
    /// The same after `delay` (the task sleeps; no thread waits).
    case delayed(Duration)
    /// A network failure with `error` (`ClientError.underlying`).
    case error(any Error)
    /// Another session: `.session(URLSession(configuration: kakapo.sessionConfiguration()))` answers from
    /// Kakapo in process (routes, Store, a cassette) with no code change in the client.
    case session(URLSession)
}
