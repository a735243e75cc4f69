import KakapoCassette
import KakapoRecordFilter
import KakapoStore
import KakapoStreams
import KakapoUpstream

/// Everything a proxy run needs to know; the CLI builds one from its flags.
public struct ProxyConfiguration: Sendable {
    /// The address to bind; 127.0.0.1 unless the user asks otherwise.
    public var host: String
    /// The port to bind; 0 picks a free one.
    public var port: Int
    /// What is done with a request by whether the cassette has it (`ProxyMode`).
    public var mode: ProxyMode
    /// The cassette file; nil runs without one (passthrough only).
    public var cassettePath: String?
    /// The upstream; required by every mode but `none`.
    public var upstream: UpstreamConfiguration?
    /// What is kept out of the cassette, the journal and the logs (credentials by default).
    public var redactor: Redactor
    /// What besides method, path and query decides a match.
    public var matching: MatchOptions
    /// What a request gets once every recording of it was played (repeat the last, or miss).
    public var repeatPolicy: InteractionIndex.RepeatPolicy
    /// The status a miss answers with.
    public var missStatus: Int
    /// The largest request body accepted, in bytes; a larger one gets 413.
    public var maximumRequestBodyBytes: Int
    /// The most request-body bytes all connections together may hold in memory while their requests are
    /// read and answered; a request that would go past it gets 503 with `Retry-After`. Bodies streamed
    /// upstream as they arrive do not count.
    public var maximumBufferedBodyBytes: Int = 256 << 20
    /// The largest header section accepted, in bytes; a larger one gets 431.
    public var maximumHeaderBytes: Int
    /// Seconds a connection may send nothing before it is closed.
    public var idleTimeout: Double
    /// Seconds within which a request must be fully received once its first byte arrived.
    public var requestReadTimeout: Double
    /// When set, the admin endpoints require `Authorization: Bearer <token>` and answer from any address;
    /// when nil they answer loopback clients only. Without the token they also refuse what a web page could
    /// send: a `Host` that is not loopback or the listening address, and changes that are not JSON or come
    /// with a foreign `Origin` (`AdminEndpoints.browserRefusal`).
    public var adminToken: String?
    /// The port of the admin listener (0 for a free one): a second socket on `host` that answers only
    /// `/__kakapo/*` and serves the inspector, so no page Kakapo serves for the app (a replayed or recorded
    /// HTML answer) shares an origin with anything that changes Kakapo or reads files. On the proxy port the
    /// admin endpoints then answer only clients that are not web pages (no `Origin` or `Sec-Fetch-*`),
    /// and `/__kakapo/ui` redirects to the admin listener. Nil: no admin listener, and so no page may use the
    /// admin API at all (the inspector does not work).
    public var adminPort: Int? = 0
    /// How long shutdown waits for requests in flight, in seconds.
    public var shutdownGracePeriod: Double
    /// Event loop threads; defaults to the number of cores.
    public var threads: Int?
    /// How replays move the recording's times to now (`--keep-time`, `--shift-time-json`).
    public var replayTime = ReplayTime()
    /// Recordings older than this many seconds are stale: replayed with a warning (and a failure in
    /// strict mode), re-recorded in the modes that record. Nil: recordings never expire.
    public var maximumAge: Double?
    /// Where Store resources keep their entities when several instances share them (PostgreSQL through
    /// `KakapoPostgres`); nil keeps them in this process's memory.
    public var sharedStore: (any SharedDocumentStore)?
    /// How long a shared-store operation may take before the request is answered 503, in seconds.
    public var sharedStoreTimeout: Double = 5
    /// Set to work as a forward proxy (`--proxy`): requests name their own host, `CONNECT` opens tunnels
    /// (decrypted or blind), and the upstream needs no base URL.
    public var forwardProxy: ForwardProxyConfiguration?
    /// How recorded event streams are replayed: with their recorded gaps, or back to back.
    public var streamTiming: StreamTiming = .recorded
    /// Records a stream the upstream broke off, with the break, to be replayed as the same break
    /// (`--record-broken-streams`); without it such a stream is not recorded.
    public var recordsBrokenStreams = false
    /// Records a stream the client leaves before its end (it stops reading, or cancels its gRPC call) as what
    /// had come, marked abandoned, to be replayed that far and then held open; when false
    /// (`--no-record-abandoned-streams`) such a stream is not recorded, and the log says so.
    public var recordsAbandonedStreams = true
    /// Requests that the modes that record forward live without recording them or answering them from the
    /// cassette (`--record-only`, `--passthrough`).
    public var recordFilter = RecordFilter()
    /// Set to enable cassette sessions (`--cassette-dir`): `POST /__kakapo/sessions` opens a session on a
    /// cassette whose path is relative to this directory, and requests that name it are answered from it.
    public var sessionDirectory: String?
    /// Seconds a session may go unused before it ends by itself and is saved (`--session-timeout`).
    public var sessionTimeout: Double = 600
    /// Seconds a request may be in flight with no bytes either way before one warning says what it waits for
    /// (`--slow-warning`); 0 says nothing.
    public var slowWarning: Double = 10

    public init(
        host: String = "127.0.0.1", port: Int = 8080, mode: ProxyMode = .replay, cassettePath: String? = nil,
        upstream: UpstreamConfiguration? = nil, redactor: Redactor = Redactor(),
        matching: MatchOptions = MatchOptions(),
        repeatPolicy: InteractionIndex.RepeatPolicy = .repeatLast, missStatus: Int = 404,
        maximumRequestBodyBytes: Int = 64 << 20, maximumHeaderBytes: Int = 80 << 10, idleTimeout: Double = 60,
        requestReadTimeout: Double = 30,
        adminToken: String? = nil,
        shutdownGracePeriod: Double = 10, threads: Int? = nil, maximumAge: Double? = nil
    ) {
        self.host = host
        self.port = port
        self.mode = mode
        self.cassettePath = cassettePath
        self.upstream = upstream
        self.redactor = redactor
        self.matching = matching
        self.repeatPolicy = repeatPolicy
        self.missStatus = missStatus
        self.maximumRequestBodyBytes = maximumRequestBodyBytes
        self.maximumHeaderBytes = maximumHeaderBytes
        self.idleTimeout = idleTimeout
        self.requestReadTimeout = requestReadTimeout
        self.adminToken = adminToken
        self.shutdownGracePeriod = shutdownGracePeriod
        self.threads = threads
        self.maximumAge = maximumAge
    }
}

extension ProxyConfiguration {
    /// The essentials of a configuration: a cassette (nil for none: routes and the Store only), a mode, and
    /// an upstream for the modes that forward; everything else as `init` sets it.
    public static func essentials(cassette: String?, mode: ProxyMode, upstream: String?) -> ProxyConfiguration {
        ProxyConfiguration(
            mode: mode, cassettePath: cassette, upstream: upstream.map { UpstreamConfiguration(baseURL: $0) })
    }
}
