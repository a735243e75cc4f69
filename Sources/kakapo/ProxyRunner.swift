import ArgumentParser
import Foundation
import Kakapo
import KakapoPostgres
import KakapoTLS
import Logging
import UnixSignals

/// Runs a proxy the way the CLI contract says: one `kakapo listening on` line on standard output when
/// ready, logs and the summary on standard error, a clean save on SIGINT or SIGTERM, and the exit codes
/// of design section 7.
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

    func run() async throws {
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
        let port: Int
        do {
            port = try await server.start()
        } catch {
            _ = await server.shutdown()
            throw ExitStatus.failure(error)
        }
        if !ListeningAddress.isLoopbackHost(configuration.host) {
            logger.warning(
                "listening on \(configuration.host), not loopback: anyone who can reach this machine can use the proxy")
        }
        // Written unbuffered, so a parent process reading a pipe sees it at once.
        let scheme = https.listensWithTLS ? "https" : "http"
        FileHandle.standardOutput.write(Data("kakapo listening on \(scheme)://\(displayHost):\(port)\n".utf8))
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

        var arrivals = firstSignal.makeAsyncIterator()
        let received = await arrivals.next()
        logger.info("received \(received.map { "\($0)" } ?? "a signal"), finishing requests in flight")
        let summary = await server.shutdown()
        standardError(summary.text(complete: strict))
        if summary.saveError != nil { throw ExitCode(ExitStatus.invalidInput) }
        if strict && summary.counts[.miss, default: 0] > 0 {
            standardError("kakapo: strict mode: \(summary.counts[.miss, default: 0]) request(s) missed")
            throw ExitCode(ExitStatus.strictMisses)
        }
        if strict && !summary.stale.isEmpty {
            standardError("kakapo: strict mode: \(summary.stale.count) stale recording(s) replayed")
            throw ExitCode(ExitStatus.strictMisses)
        }
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

func standardError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
