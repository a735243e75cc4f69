import ArgumentParser
import Foundation
import Kakapo

/// `kakapo exec -- COMMAND`: Kakapo on a free port in front of one command (a test run), which finds it
/// through its environment; exits with the command's status, or with Kakapo's own when the command passed
/// but the run did not (docs/exec.md).
struct Exec: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a command with Kakapo in front of it and exit with the command's status.",
        discussion: """
            The command gets KAKAPO_URL (Kakapo's address); with --proxy, HTTP_PROXY and HTTPS_PROXY naming \
            Kakapo; NO_PROXY with Kakapo's host added; and, when Kakapo presents certificates of its CA \
            (--proxy, --tls), SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, NODE_EXTRA_CA_CERTS and \
            AWS_CA_BUNDLE naming a bundle that trusts it. The command's standard output is its own: Kakapo's \
            listening line, logs and summary go to standard error. Signals sent to Kakapo are passed on.

            Exit status: the command's (128 + the signal that killed it; 127 when it is not found). When it \
            exits 0: 5 if a request missed, 6 with --fail-on-unused if a recording was never used, 3 if the \
            cassette could not be saved. Before it runs: 2 for a usage error, 3 for a missing or invalid \
            cassette, 4 when the port is in use.
            """)

    @Option(
        help:
            "The cassette file (optional in passthrough mode, with --routes in mode none, and with --cassette-dir).")
    var cassette: String?

    @Option(help: "The real API: http(s)://host[:port][/prefix], or h2c://... for cleartext HTTP/2 (gRPC).")
    var upstream: String?

    @Option(
        help:
            "none: replay only; new: replay hits, record misses; all: re-record; once: replay if the cassette exists, else record everything; passthrough: forward only. Default: none with --ci, new with --upstream, none without."
    )
    var mode: ProxyMode?

    @Flag(
        help:
            "Replay only, for continuous integration: refuse the modes that record or forward, never connect upstream (--upstream is then ignored), and fail before running the command when the cassette is missing."
    )
    var ci = false

    @Flag(help: "Exit with status 6 when the command exits 0 but a recording of the cassette was never used.")
    var failOnUnused = false

    @OptionGroup var common: CommonOptions
    @OptionGroup var upstreamOptions: UpstreamOptions

    @Argument(
        parsing: .postTerminator,
        help: ArgumentHelp("The command to run and its arguments, after --.", valueName: "command"))
    var command: [String] = []

    var effectiveMode: ProxyMode {
        if let mode { return mode }
        return ci ? .replay : Serve.defaultMode(cassette: cassette, upstream: upstream, common: common)
    }

    func validate() throws {
        guard !command.isEmpty else {
            throw ValidationError("give the command to run after --: kakapo exec --cassette FILE -- pytest")
        }
        guard ci else {
            try Serve.check(effectiveMode, cassette: cassette, upstream: upstream, common: common)
            return
        }
        if effectiveMode.records {
            throw ValidationError(
                "--ci replays only, and --mode \(effectiveMode.rawValue) records: leave out --mode or give --mode none")
        }
        if effectiveMode == .passthrough {
            throw ValidationError(
                "--ci never connects upstream, and --mode passthrough forwards every request: leave out --mode")
        }
        if !common.https.intercept.isEmpty {
            throw ValidationError(
                "--ci never connects upstream, and --intercept passes other hosts' tunnels through to the network: leave it out"
            )
        }
        try Serve.check(.replay, cassette: cassette, upstream: nil, common: common)
    }

    func run() async throws {
        if ci, let cassette, !FileManager.default.fileExists(atPath: cassette) {
            standardError(
                "error: --ci: the cassette \(cassette) does not exist; record it first (the same command without --ci)")
            throw ExitCode(ExitStatus.invalidInput)
        }
        // From now on a signal is kept for the command, even one that arrives while the server starts.
        ExecChild.installSignalRelay()
        var configuration = common.configuration(
            mode: effectiveMode, cassette: cassette,
            upstream: ci ? nil : try Serve.upstreamConfiguration(upstream, options: upstreamOptions, common: common))
        if !Self.portGiven(in: CommandLine.arguments) { configuration.port = 0 }
        let runner = ProxyRunner(
            configuration: configuration, strict: false, verbose: common.verbose, routes: common.routes,
            store: common.store, https: common.https, announcesOnStandardError: true)
        let inherited = ProcessInfo.processInfo.environment
        let proxyCredentials = try proxyCredentialText(inherited)
        let (status, summary) = try await runner.serve { listening in
            await runCommand(listening, inherited: inherited, proxyCredentials: proxyCredentials)
        }
        if status != 0 { throw ExitCode(status) }
        try ProxyRunner.checkSaved(summary)
        if summary.missCount > 0 {
            let count = summary.missCount
            standardError(
                "kakapo exec: the command exited 0, but \(count) request\(count == 1 ? "" : "s") missed (listed above): exit \(ExitStatus.execMisses)"
            )
            throw ExitCode(ExitStatus.execMisses)
        }
        if failOnUnused, summary.mode == .replay || summary.mode == .new, !summary.unused.isEmpty {
            let count = summary.unused.count
            standardError(
                "kakapo exec: the command exited 0, but \(count) recording\(count == 1 ? " was" : "s were") never used (--fail-on-unused): exit \(ExitStatus.execUnused)"
            )
            // The summary lists them only when requests came; with none, here.
            if summary.total == 0 { for item in summary.unused.prefix(20) { standardError("  unused: \(item)") } }
            throw ExitCode(ExitStatus.execUnused)
        }
    }

    /// Runs the command with Kakapo's variables and returns the status to exit with: the command's, 128 +
    /// a signal that came before it started, 126 or 127 when it cannot start, 3 when the CA bundle cannot
    /// be written.
    private func runCommand(
        _ listening: ProxyRunner.Listening, inherited: [String: String], proxyCredentials: String?
    ) async -> Int32 {
        var environment = ExecEnvironment(
            kakapoURL: listening.url, host: listening.host,
            proxyURL: common.https.proxy
                ? ExecEnvironment.proxyURL(
                    scheme: listening.scheme, host: listening.host, port: listening.port, credentials: proxyCredentials)
                : nil)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kakapo-exec-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        if let authority = listening.authority {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
                environment.caBundle = try ExecEnvironment.writeCABundle(
                    authorityCertificate: authority.certificatePath, into: directory, inherited: inherited)
            } catch {
                standardError("error: kakapo exec: cannot write the CA bundle for the command: \(error)")
                return ExitStatus.invalidInput
            }
        }
        do throws(ExecChild.SpawnError) {
            switch try await ExecChild.run(command, environment: environment.applied(to: inherited)) {
            case .ended(let ending):
                return ending.status
            case .interrupted(let signal):
                standardError("kakapo exec: signal \(signal) arrived before \(command[0]) started; it was not run")
                return 128 + signal
            }
        } catch {
            standardError("kakapo exec: \(error)")
            return error.status
        }
    }

    /// The forward proxy's credentials as `USER:PASSWORD`, for the proxy URL the command gets.
    private func proxyCredentialText(_ environment: [String: String]) throws -> String? {
        try SecretFile.secret(
            common.https.proxyAuth, flag: "--proxy-auth", file: common.https.proxyAuthFile,
            fileFlag: "--proxy-auth-file", variable: "KAKAPO_PROXY_AUTH", environment: environment,
            readsEnvironment: common.https.proxy)?.text
    }

    /// Whether `--port` is among the options (before `--`); without it `exec` listens on a free port
    /// rather than the usual 8080, so runs side by side never collide.
    static func portGiven(in arguments: [String]) -> Bool {
        arguments.prefix { $0 != "--" }.contains { $0 == "--port" || $0.hasPrefix("--port=") }
    }
}
