import ArgumentParser
import Foundation
import Kakapo
import KakapoPostgres

/// Options every command shares: where to listen and how requests are matched and written.
struct CommonOptions: ParsableArguments {
    @Option(help: "The address to listen on. Anything but loopback exposes the proxy to the network.")
    var host: String = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free port.")
    var port: Int = 8080

    @Option(
        help:
            "The port of the admin listener, which serves the inspector and the admin API to pages (0 picks a free one; GET /__kakapo/health names it). The app's pages, served on --port, cannot use the admin API."
    )
    var adminPort: Int = 0

    @Option(help: "The status a request that matches no recording answers with.")
    var missStatus: Int = 404

    @Flag(help: "After the last recording of a repeated request, answer a miss instead of repeating it.")
    var noRepeat = false

    @Option(help: "The largest request body accepted, in bytes (larger ones get 413).")
    var maxBodySize: Int = 64 << 20

    @Option(
        help:
            "The request-body bytes all clients together may hold in memory at once (past it 503 with Retry-After).")
    var maxBufferedBodies: Int = 256 << 20

    @Option(name: .customLong("ignore-query"), help: "A query parameter to leave out of matching (repeatable).")
    var ignoreQuery: [String] = []

    @Option(
        name: .customLong("ignore-body-field"),
        help: "A JSON body field (a JSON pointer such as /timestamp) to leave out of matching (repeatable).")
    var ignoreBodyFields: [String] = []

    @Option(
        name: .customLong("match-body-field"),
        help:
            "A JSON body field (a JSON pointer such as /orderId) whose value must match as recorded, even when it looks like a UUID, a time or a nonce (repeatable)."
    )
    var matchBodyFields: [String] = []

    @Flag(
        help:
            "Match values as recorded only. By default a request whose only differences from a recording are values of a volatile shape on both sides (UUIDs, times within a day of sending, long random hex or base64 nonces) in its query, body or a matched nonce header matches it, and the answer says so in X-Kakapo-Matched-By."
    )
    var strictValues = false

    @Option(name: .customLong("match-header"), help: "A request header whose value must match too (repeatable).")
    var matchHeaders: [String] = []

    @Flag(help: "Match requests without comparing their bodies.")
    var noMatchBody = false

    @Flag(
        help:
            "Let a recording answer whatever Range and If-Range a request sends (by default it answers only the range it was recorded for)."
    )
    var noMatchRange = false

    @Flag(
        help:
            "Let a recorded 304 or 412 answer whatever validators a request sends (If-None-Match, If-Modified-Since, If-Match, If-Unmodified-Since)."
    )
    var noMatchConditional = false

    @Flag(
        help:
            "Do not match the request headers a recorded response's Vary names, nor require a request to accept the recorded Content-Encoding."
    )
    var ignoreVary = false

    @Option(help: "The largest request header section accepted, in bytes (larger ones get 431).")
    var maxHeaderSize: Int = 80 << 10

    @Option(help: "Seconds a client connection may stay silent before it is closed.")
    var idleTimeout: Double = 60

    @Option(help: "Seconds within which a request must be fully received once it started (slow clients are closed).")
    var requestReadTimeout: Double = 30

    @Option(
        help: ArgumentHelp(
            "Require `Authorization: Bearer TOKEN` on /__kakapo/* (which then answers from any address); at least 8 characters. Other users can see it in `ps`: prefer --admin-token-file or the KAKAPO_ADMIN_TOKEN environment variable.",
            valueName: "token"))
    var adminToken: String?

    @Option(
        help: ArgumentHelp(
            "Read the admin token (see --admin-token) from the first line of this file, trimmed; at least 8 characters.",
            valueName: "file"))
    var adminTokenFile: String?

    @Option(
        name: .customLong("routes"),
        help: ArgumentHelp(
            "A routes file (JSON, or YAML for .yaml/.yml) whose routes and resources answer before the cassette (repeatable).",
            valueName: "file"))
    var routes: [String] = []

    @Option(
        help: ArgumentHelp(
            "Recordings older than this are stale (30d, 12h, 90m): replayed with a warning (an error with --strict), re-recorded in the modes that record.",
            valueName: "age"))
    var maxAge: String?

    @Option(
        help: ArgumentHelp(
            "Keep the entities of Store resources in PostgreSQL, shared with every Kakapo pointed at the same database (also KAKAPO_STORE_URL).",
            valueName: "postgres://user@host:port/db"))
    var store: String?

    @Option(
        help: ArgumentHelp(
            "Enable cassette sessions (POST /__kakapo/sessions): each test opens one on its own cassette, named relative to this folder.",
            valueName: "dir"))
    var cassetteDir: String?

    @Option(
        help: ArgumentHelp(
            "Seconds a session may go unused before it ends by itself and is saved.", valueName: "seconds"))
    var sessionTimeout: Double = 600

    @OptionGroup var streams: StreamOptions
    @OptionGroup var replayTime: ReplayTimeOptions
    @OptionGroup var grpc: GRPCOptions
    @OptionGroup var recordFilters: RecordFilterOptions
    @OptionGroup var redaction: RedactionOptions
    @OptionGroup var https: ForwardProxyOptions
    @OptionGroup var watchdog: WatchdogOptions

    @Flag(name: .shortAndLong, help: "Log every request to standard error.")
    var verbose = false

    func validate() throws {
        guard (0...65535).contains(port) else {
            throw ValidationError("--port must be from 0 to 65535, not \(port)")
        }
        guard (0...65_535).contains(adminPort) else {
            throw ValidationError("--admin-port must be from 0 to 65535, not \(adminPort)")
        }
        if adminPort != 0 && adminPort == port {
            throw ValidationError(
                "--admin-port must differ from --port (\(port)): the admin listener is a second socket")
        }
        guard (100...999).contains(missStatus) else {
            throw ValidationError("--miss-status must be an HTTP status from 100 to 999, not \(missStatus)")
        }
        guard (1...CommonOptions.largestBodySize).contains(maxBodySize) else {
            throw ValidationError(
                "--max-body-size must be from 1 to \(CommonOptions.largestBodySize) bytes (1 TiB), not \(maxBodySize)")
        }
        guard (1...CommonOptions.largestBodySize).contains(maxBufferedBodies) else {
            throw ValidationError(
                "--max-buffered-bodies must be from 1 to \(CommonOptions.largestBodySize) bytes (1 TiB), not \(maxBufferedBodies)"
            )
        }
        guard (1024...CommonOptions.largestHeaderSize).contains(maxHeaderSize) else {
            throw ValidationError(
                "--max-header-size must be from 1024 to \(CommonOptions.largestHeaderSize) bytes (64 MiB), not \(maxHeaderSize)"
            )
        }
        try checkSeconds(idleTimeout, flag: "--idle-timeout", upTo: CommonOptions.largestTimeout)
        try checkSeconds(requestReadTimeout, flag: "--request-read-timeout", upTo: CommonOptions.largestTimeout)
        guard sessionTimeout >= 0.1, sessionTimeout <= CommonOptions.largestTimeout else {
            throw ValidationError(
                "--session-timeout must be from 0.1 to \(Int(CommonOptions.largestTimeout)) seconds, not \(sessionTimeout)"
            )
        }
        if cassetteDir?.isEmpty == true { throw ValidationError("--cassette-dir must name a folder") }
        _ = try adminTokenValue()
        try validatePointers(ignoreBodyFields, flag: "--ignore-body-field")
        try validatePointers(matchBodyFields, flag: "--match-body-field")
        if let store {
            do {
                _ = try PostgresURL(store)
            } catch {
                throw ValidationError("--store: \(error)")
            }
        }
        if let maxAge, CommonOptions.seconds(maxAge) == nil {
            throw ValidationError(
                "--max-age takes an age such as 30d, 12h, 90m or 45s, at most 36500d (a hundred years), not \"\(maxAge)\""
            )
        }
    }

    /// The largest `--max-body-size`: 1 TiB (sums of body sizes stay far from overflow).
    static let largestBodySize = 1 << 40
    /// The largest `--max-header-size`: 64 MiB.
    static let largestHeaderSize = 64 << 20
    /// The longest `--idle-timeout`, `--request-read-timeout` and `--timeout`: a day, in seconds.
    static let largestTimeout = 86_400.0
    /// The longest `--max-age`: a hundred years, in seconds.
    static let largestAge = 36_500 * 86_400.0

    /// The admin token from `--admin-token`, `--admin-token-file` (its first line, trimmed) or, when
    /// neither is given, the `KAKAPO_ADMIN_TOKEN` environment variable; nil when none is set.
    func adminTokenValue(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String? {
        guard
            let (token, source) = try SecretFile.secret(
                adminToken, flag: "--admin-token", file: adminTokenFile, fileFlag: "--admin-token-file",
                variable: "KAKAPO_ADMIN_TOKEN", environment: environment)
        else { return nil }
        guard token.count >= 8 else {
            throw ValidationError("the admin token (\(source)) must be at least 8 characters")
        }
        // A header's value loses its leading and trailing blanks, and a token of spaces would be no secret:
        // only the visible ASCII characters a Bearer credential carries unchanged.
        guard token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw ValidationError(
                "the admin token (\(source)) must be visible ASCII characters, with no spaces or control characters")
        }
        return token
    }

    /// Seconds in an age such as `30d`, `12h`, `90m`, `45s` or `2w`, up to a hundred years; nil when it
    /// is not one.
    static func seconds(_ age: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800]
        guard let unit = age.last, let size = units[unit], let amount = Double(age.dropLast()), amount > 0,
            amount <= largestAge / size
        else {
            return nil
        }
        return amount * size
    }

    var redactor: Redactor { redaction.redactor }

    var matching: MatchOptions {
        var matching = MatchOptions(
            ignoredQueryParameters: Set(ignoreQuery), ignoredBodyFields: ignoreBodyFields.compactMap(JSONPointer.init),
            matchedHeaders: matchHeaders, matchBody: !noMatchBody)
        matching.matchRange = !noMatchRange
        matching.matchConditional = !noMatchConditional
        matching.matchVary = !ignoreVary
        matching.matchesByShape = !strictValues
        matching.datesMoveWithClock = !replayTime.keepTime
        matching.exactBodyFields = matchBodyFields.compactMap(JSONPointer.init)
        return matching
    }

    /// The proxy configuration these options describe, for `mode`, `cassette` and `upstream`.
    func configuration(mode: ProxyMode, cassette: String?, upstream: UpstreamConfiguration?) -> ProxyConfiguration {
        var configuration = ProxyConfiguration(
            host: host, port: port, mode: mode, cassettePath: cassette, upstream: upstream, redactor: redactor,
            matching: matching, repeatPolicy: noRepeat ? .miss : .repeatLast, missStatus: missStatus,
            maximumRequestBodyBytes: maxBodySize, maximumHeaderBytes: maxHeaderSize, idleTimeout: idleTimeout,
            requestReadTimeout: requestReadTimeout, adminToken: resolvedAdminToken,
            maximumAge: maxAge.flatMap(CommonOptions.seconds))
        streams.apply(to: &configuration)
        replayTime.apply(to: &configuration)
        grpc.apply(to: &configuration)
        recordFilters.apply(to: &configuration)
        watchdog.apply(to: &configuration)
        configuration.maximumBufferedBodyBytes = maxBufferedBodies
        configuration.adminPort = adminPort
        configuration.sessionDirectory = cassetteDir
        configuration.sessionTimeout = sessionTimeout
        return configuration
    }
}

extension CommonOptions {
    /// The admin token `validate()` accepted. Should the file become unreadable in between, the admin API
    /// stays locked behind a random token rather than open.
    fileprivate var resolvedAdminToken: String? {
        do {
            return try adminTokenValue()
        } catch {
            return UUID().uuidString
        }
    }
}

/// Checks a number of seconds from a flag: more than zero and at most `limit`, before any arithmetic.
func checkSeconds(_ value: Double, flag: String, upTo limit: Double) throws {
    guard value > 0, value <= limit else {
        throw ValidationError("\(flag) must be more than 0 and at most \(Int(limit)) seconds, not \(value)")
    }
}

func validatePointers(_ values: [String], flag: String) throws {
    for value in values where value.isEmpty || JSONPointer(value) == nil {
        throw ValidationError("\(flag) takes a JSON pointer such as /user/password, not \"\(value)\"")
    }
}
