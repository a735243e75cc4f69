import Foundation
import Kakapo
import KakapoTestSupport

/// Starts a `ProxyServer` on a free port with a client pointed at it.
struct ProxyHarness {
    let server: ProxyServer
    let client: TestClient
    let port: Int

    static func start(_ configuration: ProxyConfiguration) async throws -> ProxyHarness {
        var configuration = configuration
        configuration.port = 0
        let server = try ProxyServer(configuration: configuration)
        let port = try await server.start()
        return ProxyHarness(server: server, client: try TestClient(port: port), port: port)
    }

    /// Records through a proxy in front of `upstream` into `cassette`.
    static func recording(
        _ upstream: TestUpstream, cassette: String, mode: ProxyMode = .new, redactor: Redactor = Redactor()
    ) async throws -> ProxyHarness {
        try await start(
            ProxyConfiguration(
                mode: mode, cassettePath: cassette, upstream: UpstreamConfiguration(baseURL: upstream.baseURL),
                redactor: redactor))
    }

    /// Replays `cassette` with no upstream.
    static func replaying(_ cassette: String, repeatPolicy: InteractionIndex.RepeatPolicy = .repeatLast) async throws
        -> ProxyHarness
    {
        try await start(ProxyConfiguration(mode: .replay, cassettePath: cassette, repeatPolicy: repeatPolicy))
    }

    @discardableResult
    func stop() async -> ProxySummary {
        client.shutdown()
        return await server.shutdown()
    }
}

extension HTTP.Response {
    /// The header fields without the one Kakapo adds to say where an answer came from.
    var headersWithoutSource: [HTTP.Headers.Field] {
        headers.fields.filter { !$0.name.caseInsensitiveEquals("X-Kakapo-Source") }
    }

    var source: String? { headers["X-Kakapo-Source"] }
}
