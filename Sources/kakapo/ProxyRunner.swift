import ArgumentParser
import Foundation
import Kakapo
import KakapoPostgres
import KakapoProxy
import KakapoTLS
import Logging
import UnixSignals

/// Runs a proxy the way the CLI contract says: one `kakapo listening on` line on standard output when
/// ready, logs and the summary on standard error, a clean save on SIGINT or SIGTERM, and the exit codes
/// of design section 7. `serve`, `record` and `replay` call `run()`; `kakapo exec` calls
/// `serve(while:)`, which stops when its command ends rather than on a signal.
struct ProxyRunner {
    let configuration: ProxyConfiguration
    let strict: Bool
    let verbose: Bool
    /// Routes files, loaded before the server starts and reloaded when they change.
    var routes: [String] = []
    /// `--store`: the PostgreSQL database that keeps Store resources' entities (else KAKAPO_STORE_URL).
    var store: String?
    /// `--proxy`, `--intercept`, `--tls` and their CA.
    var https = ForwardProxyOptions()
    /// Writes the `kakapo listening on` line to standard error instead of standard output: under
    /// `kakapo exec` standard output belongs to the command.
    var announcesOnStandardError = false

    /// Where a started proxy listens, for the code that runs while it serves.
    struct Listening: Sendable {
        /// `http` or `https` (`--tls`).
        let scheme: String
        /// The host a client on this machine connects to: the listening host, loopback for a wildcard one.
        let host: String
        let port: Int
        /// The CA whose certificates the proxy presents (`--proxy` tunnels, `--tls`), when it has one.
        let authority: CertificateAuthority?

        /// `scheme://HOST:PORT`.
        var url: String { "\(scheme)://\(host):\(port)" }
    }

    /// `serve`, `record` and `replay`: serves until SIGINT or SIGTERM, then stops gracefully, prints the
    /// summary and exits as design section 7 says (3 when the cassette could not be saved, 1 in strict mode
    /// with misses or stale recordings).
    func run() async throws {
        // SIGINT and SIGTERM stop the server gracefully; a second one exits at once. Trapped before the
        // server starts, so one that comes while it starts is not lost.
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        let (firstSignal, firstSignalArrived) = AsyncStream<UnixSignal>.makeStream()
        let signalWatcher = Task {
            var seen = 0
            for await signal in signals {
                seen += 1
                guard seen > 1 else {
                    firstSignalArrived.yield(signal)
                    continue
                }
                standardError("kakapo: second signal, exiting now (the cassette on disk is the last complete save)")
                Foundation.exit(130)
            }
        }
        defer { signalWatcher.cancel() }
        let (_, summary) = try await serve { _ in
            // Made here, after `serve` set up logging.
            let logger = Logger(label: "kakapo")
            var arrivals = firstSignal.makeAsyncIterator()
            let received = await arrivals.next()
            logger.info("received \(received.map { "\($0)" } ?? "a signal"), finishing requests in flight")
        }
        try Self.checkSaved(summary)
        if strict && summary.missCount > 0 {
            standardError("kakapo: strict mode: \(summary.missCount) request(s) missed")
            throw ExitCode(ExitStatus.strictMisses)
        }
        if strict && !summary.stale.isEmpty {
            standardError("kakapo: strict mode: \(summary.stale.count) stale recording(s) replayed")
            throw ExitCode(ExitStatus.strictMisses)
        }
    }

    /// Exit 3 when the final save of the cassette failed (the summary has said what is where).
    static func checkSaved(_ summary: ProxySummary) throws {
        if summary.saveError != nil { throw ExitCode(ExitStatus.invalidInput) }
    }

    /// Starts the proxy, announces it, runs `body` with where it listens, then stops gracefully (requests
    /// in flight finish, the cassette is saved), prints the summary on standard error and returns
    /// `body`'s result with the summary. A failure to start exits with the code `ExitStatus` gives it.
    func serve<Result: Sendable>(while body: (Listening) async throws -> Result) async throws -> (
        Result, ProxySummary
    ) {
        StandardStream.ignoreBrokenPipes()
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = verbose ? .debug : .info
            return handler
        }
        let logger = Logger(label: "kakapo")
        var configuration = configuration
        reportUpstreamProxies(&configuration, logger: logger)
        let authority: CertificateAuthority?
        var tls = ServerTLS()
        do {
            authority = try https.apply(to: &configuration, server: &tls)
            // WebSocket tunnels to an https:// upstream trust what libcurl trusts for it. Only where one can
            // be https (its TLS context costs about 10 ms of start-up).
            if let upstream = configuration.upstream,
                upstream.baseURL.lowercased().hasPrefix("https:") || configuration.forwardProxy != nil
                    || upstream.proxies?.https?.scheme == "https" || upstream.proxies?.http?.scheme == "https"
            {
                tls.upstream = try UpstreamTLSClient(upstream)
            }
        } catch {
            throw ExitStatus.failure(error)
        }
        let shared = try await connectStore(logger: logger)
        configuration.sharedStore = shared
        defer { shared?.shutdown() }
        let server: ProxyServer
        do {
            server = try ProxyServer(configuration: configuration, tls: tls, http2: https.http2, logger: logger)
        } catch {
            throw ExitStatus.failure(error)
        }
        var watcher: RoutesFileWatcher?
        if !routes.isEmpty {
            do {
                try server.pipeline.install(try RoutesFile.load(routes), directory: routesDirectory)
            } catch {
                _ = await server.shutdown()
                throw ExitStatus.failure(error)
            }
            let pipeline = server.pipeline
            let directory = routesDirectory
            watcher = RoutesFileWatcher(paths: routes) { result in
                do {
                    try pipeline.install(try result.get(), directory: directory)
                    logger.info("reloaded the routes: \(pipeline.stubs.routes.count) routes")
                } catch {
                    logger.error("the routes were not reloaded, the previous ones stay in force: \(error)")
                }
            }
        }
        defer { watcher?.stop() }
        let port: Int
        do {
            port = try await server.start()
        } catch {
            _ = await server.shutdown()
            throw ExitStatus.failure(error)
        }
        let heapReturner = HeapReturner()
        defer { heapReturner.stop() }
        if !ListeningAddress.isLoopbackHost(configuration.host) {
            logger.warning(
                "listening on \(configuration.host), not loopback: anyone who can reach this machine can use the proxy")
        }
        // Written unbuffered, so a parent process reading a pipe sees it at once.
        let scheme = https.listensWithTLS ? "https" : "http"
        StandardStream.write(
            "kakapo listening on \(scheme)://\(displayHost):\(port)\n", to: announcesOnStandardError ? 2 : 1)
        if let admin = server.adminPort {
            logger.info(
                "inspector and admin API for pages: http://\(displayHost):\(admin)/__kakapo/ui (pages on port \(port) cannot use the admin API)"
            )
        }
        if https.http2 != nil {
            var ways = [https.listensWithTLS ? "h2 by ALPN" : "h2c with prior knowledge"]
            if https.proxy { ways.append("h2 by ALPN in decrypted tunnels") }
            logger.info("HTTP/1.1 and HTTP/2 (\(ways.joined(separator: ", "))); --no-http2 turns HTTP/2 off")
        }
        if https.proxy {
            // With --proxy-auth clients put the credentials in the URL; the log names the user, never the password.
            let user = configuration.forwardProxy?.credentials.map { "\($0.user):PASSWORD@" } ?? ""
            let address = "\(scheme)://\(user)\(displayHost):\(port)"
            logger.info(
                "forward proxy: export HTTP_PROXY=\(address) HTTPS_PROXY=\(address); clients trust \(authority?.certificatePath ?? "Kakapo's CA") (kakapo ca trust)"
            )
        }

        let result: Result
        do {
            result = try await body(Listening(scheme: scheme, host: urlHost, port: port, authority: authority))
        } catch {
            _ = await server.shutdown()
            throw error
        }
        let summary = await server.shutdown()
        standardError(summary.text(complete: strict))
        return (result, summary)
    }

    /// Logs the upstream proxies in force and where they came from. A forward proxy drops, with a warning,
    /// a proxy at its own listening address: its clients' `HTTPS_PROXY`, which would send its requests
    /// back to itself.
    private func reportUpstreamProxies(_ configuration: inout ProxyConfiguration, logger: Logger) {
        guard var proxies = configuration.upstream?.proxies else { return }
        if https.proxy {
            let listening = ListeningAddress(
                configuredHost: configuration.host, localIP: nil,
                port: configuration.port == 0 ? nil : configuration.port)
            let (kept, warnings) = proxies.droppingSelf { listening.isSelf(host: $0, port: $1) }
            for warning in warnings { logger.warning("\(warning)") }
            proxies = kept
            configuration.upstream?.proxies = kept
        }
        for line in UpstreamOptions.proxyReport(proxies, environment: ProcessInfo.processInfo.environment) {
            logger.info("\(line)")
        }
    }

    /// Where file names of routes added through the admin API resolve: the first routes file's folder.
    private var routesDirectory: String? {
        routes.first.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
    }

    private var displayHost: String {
        configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
    }

    /// The host a client on this machine connects to: the listening host, or loopback for a wildcard one.
    private var urlHost: String {
        switch configuration.host {
        case "0.0.0.0", "": return "127.0.0.1"
        case "::", "[::]": return "[::1]"
        default: return displayHost
        }
    }

    /// The shared store named by `--store` or `KAKAPO_STORE_URL`, connected and checked; nil without one.
    private func connectStore(logger: Logger) async throws -> PostgresDocumentStore? {
        let fromEnvironment = ProcessInfo.processInfo.environment["KAKAPO_STORE_URL"].flatMap { $0.isEmpty ? nil : $0 }
        guard let text = store ?? fromEnvironment else { return nil }
        let source = store != nil ? "--store" : "KAKAPO_STORE_URL"
        do {
            let shared = try await PostgresDocumentStore.connect(try PostgresURL(text), logger: logger)
            logger.info("Store resources keep their entities in \(shared.location)")
            return shared
        } catch {
            throw ExitStatus.failure(error, context: source)
        }
    }
}

extension ProxySummary {
    /// Requests that matched no recording.
    var missCount: Int { counts[.miss, default: 0] }
}

func standardError(_ text: String) {
    StandardStream.write(text + "\n", to: 2)
}
