import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON
import KakapoResources
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The open cassette sessions of a server started with a session directory (`--cassette-dir`), keyed by
/// a random id: opens them (cassette paths confined to the directory), finds the one a request names,
/// ends them (saving what they recorded), and ends by itself any left idle for `timeout`.
package final class SessionRegistry: Sendable {
    /// The session directory, resolved (no symbolic links), without a trailing slash.
    let root: String
    /// How long a session may go unused before it ends by itself.
    let timeout: Duration
    /// What a session asks for when it names nothing: the server's own mode and matching.
    let defaultMode: ProxyMode
    let defaultMatching: MatchOptions
    let redactor: Redactor
    let repeatPolicy: InteractionIndex.RepeatPolicy
    /// Whether the server can forward (modes other than `none` need it).
    let hasUpstream: Bool
    /// The user name of the forward proxy's credentials (`ForwardProxyConfiguration.credentials`), when it
    /// has some: a session is then named as `USER+ID` with the password, not as the user name `ID` alone.
    let proxyUser: String?
    let logger: Logger
    private let state = Mutex(State())
    /// The port the server listens on, once it does (for the proxy URL a new session answers).
    package let port = Mutex<Int?>(nil)
    /// How often idle sessions are looked for.
    private let sweepInterval: Double
    /// Where sessions are opened, ended and expired: file work, away from the event loops.
    let queue = DispatchQueue(label: "kakapo.sessions")

    private struct State {
        var sessions: [String: TestSession] = [:]
        /// Resolved cassette paths an open session (or one being opened) records into.
        var recording: Set<String> = []
        var closed = false
    }

    /// The most sessions open at once; a POST past it gets 503.
    static let maximumSessions = 4096

    /// The most sessions that record at once: an eighth of what the process may open beyond 256 descriptors
    /// (each takes two), at least 8 and at most `maximumSessions`. With the usual 1,024 that is 96.
    package static let recordingLimit: Int = {
        var limit = rlimit()
        #if os(Linux)
            let read = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        #else
            let read = getrlimit(RLIMIT_NOFILE, &limit)
        #endif
        guard read == 0 else { return 96 }
        // Unlimited (RLIM_INFINITY, all ones) counts as a million.
        let open = min(UInt64(limit.rlim_cur), 1 << 20)
        return Int(min(UInt64(maximumSessions), max(8, open > 256 ? (open - 256) / 8 : 0)))
    }()

    init(
        directory: String, timeout: Duration, defaultMode: ProxyMode, defaultMatching: MatchOptions,
        redactor: Redactor, repeatPolicy: InteractionIndex.RepeatPolicy, hasUpstream: Bool, proxyUser: String? = nil,
        drainLimit: Duration = .seconds(10), logger: Logger
    ) throws(ProxyError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue,
            let resolved = SessionRegistry.realPath(directory)
        else {
            throw ProxyError(
                code: .configuration, message: "--cassette-dir \(directory): no such directory (create it first)")
        }
        self.root = resolved == "/" ? "" : resolved
        self.timeout = timeout
        self.defaultMode = defaultMode
        self.defaultMatching = defaultMatching
        self.redactor = redactor
        self.repeatPolicy = repeatPolicy
        self.hasUpstream = hasUpstream
        self.proxyUser = proxyUser
        self.drainLimit = drainLimit
        self.logger = logger
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        self.sweepInterval = min(max(seconds / 4, 0.05), 5)
        scheduleSweep()
    }

    /// Looks for idle sessions in `sweepInterval`, and again after that until `closeAll`.
    private func scheduleSweep() {
        queue.asyncAfter(deadline: .now() + sweepInterval) { [weak self] in
            guard let self, !self.state.withLock({ $0.closed }) else { return }
            self.expireIdle()
            self.scheduleSweep()
        }
    }

    /// The open sessions, oldest id first.
    var listing: JSONValue {
        let sessions = state.withLock { Array($0.sessions.values) }
        return .array(sessions.sorted { $0.id < $1.id }.map(\.listing))
    }

    /// What a request says about sessions: nothing, an open session, or an id no open session has.
    enum Selection {
        case none
        case session(TestSession)
        case unknown(String)
    }

    /// How many sessions are open.
    var openCount: Int { state.withLock { $0.sessions.count } }

    /// The open session with this id (for the inspector); nil when none is open.
    func session(_ id: String) -> TestSession? { state.withLock { $0.sessions[id] } }

    /// Whether a session with this id is open.
    package func isOpen(_ id: String) -> Bool { state.withLock { $0.sessions[id] != nil } }

    /// Finds the session `request` names (`X-Kakapo-Session`, or the user name of `Proxy-Authorization:
    /// Basic` credentials) and removes what named it, so it reaches neither the upstream nor the cassette.
    /// With the forward proxy's own credentials, the server has already checked them, taken them out and
    /// turned a session they named (`USER+ID`) into `X-Kakapo-Session`.
    func select(_ request: inout HTTP.Request) -> Selection {
        guard let id = Self.sessionID(in: request.headers) else { return .none }
        request.headers.remove(name: "X-Kakapo-Session")
        request.headers.remove(name: "Proxy-Authorization")
        guard let session = state.withLock({ $0.sessions[id] }) else { return .unknown(id) }
        return .session(session)
    }

    /// The session id request headers carry; nil when they carry none.
    package static func sessionID(in headers: HTTP.Headers) -> String? {
        if let header = headers["X-Kakapo-Session"] {
            return String(header.trimmingCharacters(in: .whitespaces).prefix(128))
        }
        guard let credentials = headers["Proxy-Authorization"], let decoded = ProxyCredentials.basic(credentials)
        else { return nil }
        let text = String(decoding: decoded, as: UTF8.self)
        return String(text.prefix { $0 != ":" }.prefix(128))
    }

    /// What a request, a CONNECT or a DELETE naming no open session is told.
    package static func unknown(_ id: String) -> String {
        "no open session with the id \(id) (it ended, expired, or was never opened: POST /__kakapo/sessions)"
    }

    /// Opens a session as `POST /__kakapo/sessions` asks: 201 with its id and how to use it, 400 naming
    /// what is wrong, 409 when another open session records into the same file.
    /// `ownStore` makes the routes-file resources afresh, for a session that asks for its own Store.
    func open(_ body: [UInt8], ownStore: () -> StoreResources) -> HTTP.Response {
        let request: SessionRequest
        do {
            request = try SessionRequest(body, defaultMode: defaultMode, defaultMatching: defaultMatching)
        } catch {
            return .error(error.message, status: 400)
        }
        let path: String
        do {
            // A session that records makes the folders of its cassette; one that does not needs none of them.
            path = try resolve(
                request.cassette, creatingFolders: request.mode.records, allowingMissing: !request.mode.records)
        } catch {
            return .error(error.message, status: 400)
        }
        let exists = FileManager.default.fileExists(atPath: path)
        let mode = request.mode.resolved(cassetteExists: exists)
        if let problem = request.mode.problem(
            cassette: request.cassette, cassetteExists: exists, hasUpstream: hasUpstream)
        {
            return .error("\"mode\": \(problem)", status: 400)
        }
        let refusal: HTTP.Response? = state.withLock { state in
            if state.closed { return .error("the server is shutting down", status: 503) }
            if state.sessions.count >= Self.maximumSessions {
                return .json(
                    [
                        "error": .string(
                            "\(Self.maximumSessions) sessions are open already: end some (DELETE /__kakapo/sessions/{id})"
                        )
                    ], status: 503)
            }
            if mode.records {
                // Each recording session holds two descriptors (its cassette's lock and journal) until it ends:
                // bounded, so sessions left open cannot take the descriptors connections need.
                if state.recording.count >= Self.recordingLimit {
                    var refused = HTTP.Response.json(
                        [
                            "error": .string(
                                "\(Self.recordingLimit) sessions record already (each holds a lock and a journal open): end some (DELETE /__kakapo/sessions/{id}) or replay (\"mode\": \"none\")"
                            )
                        ], status: 503)
                    refused.headers.add(name: "Retry-After", value: "1")
                    return refused
                }
                guard state.recording.insert(path).inserted else {
                    return .json(
                        [
                            "error": .string(
                                "another open session records into \(request.cassette); end it first or replay (\"mode\": \"none\")"
                            )
                        ], status: 409)
                }
            }
            return nil
        }
        if let refusal { return refusal }
        let session: TestSession
        do {
            session = try makeSession(request, path: path, mode: mode, store: request.ownStore ? ownStore() : nil)
        } catch {
            if mode.records { _ = state.withLock { $0.recording.remove(path) } }
            let status = error.code == .locked ? 409 : 400
            return .error("\"cassette\": \(request.cassette): \(error)", status: status)
        }
        state.withLock { $0.sessions[session.id] = session }
        logger.info("session \(session.id) opened: \(request.cassette) in mode \(mode.rawValue)")
        var response = HTTP.Response.json(
            [
                "id": .string(session.id), "cassette": .string(request.cassette), "mode": .string(mode.rawValue),
                "proxy": .string(proxyURL(for: session.id)),
                "header": ["X-Kakapo-Session": .string(session.id)],
            ], status: 201)
        response.headers.add(name: "Location", value: "/__kakapo/sessions/" + session.id)
        return response
    }

    /// The proxy URL that names session `id`: `http://ID:@127.0.0.1:PORT`, or with the forward proxy's
    /// credentials `http://USER+ID@127.0.0.1:PORT`, where the client puts `:PASSWORD` after the user name
    /// (no answer ever holds the password).
    func proxyURL(for id: String) -> String {
        let port = port.withLock { $0 } ?? 0
        guard let proxyUser else { return "http://\(id):@127.0.0.1:\(port)" }
        var allowed = CharacterSet.urlUserAllowed
        allowed.remove(charactersIn: ":@")
        let user = proxyUser.addingPercentEncoding(withAllowedCharacters: allowed) ?? proxyUser
        return "http://\(user)+\(id)@127.0.0.1:\(port)"
    }

    private func makeSession(_ request: SessionRequest, path: String, mode: ProxyMode, store: StoreResources?)
        throws(CassetteError)
        -> TestSession
    {
        // A recording that was killed left its last interactions in the journal: they go in first.
        if let recovery = try CassetteSession.recover(path, matching: request.matching) {
            logger.notice("\(recovery.summary)")
        }
        // A replaying session on a cassette that does not exist opens on none: its requests miss, and its
        // summary says why.
        let missing = !mode.records && !FileManager.default.fileExists(atPath: path)
        let session = try CassetteSession.opened(
            at: path, mode: mode, redactor: redactor, matching: request.matching, repeatPolicy: repeatPolicy,
            logger: logger, allowingMissing: missing)
        if mode.records { try session.startAutosave() }
        return TestSession(
            id: Self.newID(), name: request.cassette, mode: mode, strict: request.strict, cassette: session,
            store: store, missingFile: missing)
    }

    /// Ends session `id` as `DELETE /__kakapo/sessions/{id}` asks: saves what it recorded and answers its
    /// summary; 404 naming the id when no open session has it.
    func close(_ id: String) -> HTTP.Response {
        guard let session = state.withLock({ $0.sessions.removeValue(forKey: id) }) else {
            return .error(Self.unknown(String(id.prefix(128))), status: 404)
        }
        let saveError = end(session)
        return .json(session.summary(saveError: saveError), status: saveError == nil ? 200 : 500)
    }

    /// How long ending a session waits for its requests in flight to be answered (and recorded), streamed
    /// answers included: the server's grace period.
    let drainLimit: Duration

    /// Saves and releases a session already taken out of the registry; the save error, if any.
    private func end(_ session: TestSession) -> String? {
        var saveError: String?
        // Requests still in flight record before they answer, and streams when they end: their recordings go
        // in the save. Streams still going after the wait are recorded as they stand, marked abandoned.
        session.waitUntilIdle(within: drainLimit)
        session.cutOpenStreams()
        // The cut streams are handed over at once; a stream that ended just then, or a plain answer still on
        // its way, is waited for as ever (10 s, whatever the grace period).
        session.waitUntilIdle(within: .seconds(10))
        if session.mode.records {
            // WebSocket conversations still open are recorded as they stand before the cassette closes (this
            // runs on the sessions' queue, never on an event loop, so it may wait for them).
            WebSocketRecordings.finishAll(recordingInto: session.cassette)
            do {
                try session.cassette.close()
            } catch {
                saveError = "\(error)"
                logger.error("session \(session.id): cannot save \(session.name): \(error)")
            }
            _ = state.withLock { $0.recording.remove(session.cassette.path) }
        }
        logger.info("session \(session.id) ended: \(session.name), \(session.cassette.recordedCount) recorded")
        return saveError
    }

    /// Ends the sessions idle for `timeout` (they are saved as a DELETE would).
    private func expireIdle() {
        let now = ContinuousClock.now
        let idle = state.withLock { state -> [TestSession] in
            let expired = state.sessions.values.filter { $0.isIdle(for: timeout, now: now) }
            for session in expired { state.sessions[session.id] = nil }
            return expired
        }
        for session in idle {
            logger.info("session \(session.id) was idle for \(timeout): ending it")
            _ = end(session)
        }
    }

    /// Ends every session (at shutdown) and stops expiring them; the save errors, one per line.
    func closeAll() -> [String] {
        let open = queue.sync {
            state.withLock { state -> [TestSession] in
                state.closed = true
                defer { state.sessions = [:] }
                return Array(state.sessions.values)
            }
        }
        return open.compactMap { session in end(session).map { "session \(session.id): \($0)" } }
    }

    /// Where `name` lives inside the session directory, with every folder on the way resolved (and made,
    /// when `creatingFolders`; taken as written from the first missing one when `allowingMissing`, for a
    /// session that writes nothing); throws when it would leave the directory.
    func resolve(_ name: String, creatingFolders: Bool, allowingMissing: Bool = false) throws(ProxyError) -> String {
        func leaves(_ why: String) -> ProxyError {
            ProxyError(code: .configuration, message: "\"cassette\": \(name) \(why)")
        }
        if name.hasPrefix("/") { throw leaves("is absolute; name it relative to the session directory") }
        let components = name.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard let file = components.last, file != ".", file != ".." else { throw leaves("names no file") }
        if components.contains("..") { throw leaves("leaves the session directory (..)") }
        if let problem = CassetteFile.reservedNameProblem(file) {
            throw ProxyError(code: .configuration, message: "\"cassette\": \(name): \(problem)")
        }
        var folder = root
        let folders = components.dropLast().filter { $0 != "." }
        for (index, component) in folders.enumerated() {
            let next = folder + "/" + component
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: next, isDirectory: &isDirectory) {
                if allowingMissing && !creatingFolders {
                    // Nothing below a missing folder exists: no link to follow out of the directory.
                    return ([next] + folders.dropFirst(index + 1) + [file]).joined(separator: "/")
                }
                guard creatingFolders else { throw leaves("is in a folder that does not exist") }
                if mkdir(next, 0o755) != 0 && errno != EEXIST {
                    throw leaves("cannot be made: mkdir \(next): \(String(cString: strerror(errno)))")
                }
            }
            guard let resolved = Self.realPath(next), isInside(resolved) else {
                throw leaves("leaves the session directory (through a symbolic link)")
            }
            folder = resolved
        }
        let path = folder + "/" + file
        var info = stat()
        if lstat(path, &info) == 0 {
            guard let resolved = Self.realPath(path), isInside(resolved) else {
                throw leaves("leaves the session directory (through a symbolic link)")
            }
            return resolved
        }
        return path
    }

    private func isInside(_ path: String) -> Bool { path == root || path.hasPrefix(root + "/") || root.isEmpty }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// 16 hexadecimal digits from the system's random source.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
