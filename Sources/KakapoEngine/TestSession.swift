import Dispatch
import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON
import KakapoResources
import KakapoStreams
import Synchronization

/// One cassette session opened through `POST /__kakapo/sessions`: a `CassetteSession` (playback order,
/// recording, journal) with its own mode, strictness and matching, and what it saw for its summary.
final class TestSession: Sendable {
    /// The most misses a session keeps for its summary; past it they are only counted.
    static let keptMisses = 100

    let id: String
    /// The cassette as the client named it, relative to the session directory.
    let name: String
    let mode: ProxyMode
    let strict: Bool
    let cassette: CassetteSession
    /// The session's own routes-file resources (`"store": "own"`); nil shares the server's.
    let store: StoreResources?
    private let state = Mutex(State())

    private struct State {
        var lastUsed = ContinuousClock.now
        /// Requests of this session not answered yet.
        var inFlight = 0
        var replayed = 0
        var misses: [JSONValue] = []
        var missCount = 0
        /// Threads waiting for `inFlight` to reach zero (`waitUntilIdle`).
        var idleWaiters: [DispatchSemaphore] = []
        /// Streamed answers being recorded (each also counted in `inFlight`), by number: what records each
        /// as it stands when the session ends before it does.
        var openStreams: [Int: @Sendable () -> Void] = [:]
        var nextStream = 0
    }

    /// The session replays a cassette that does not exist (its requests miss; the summary says so).
    let missingFile: Bool

    init(
        id: String, name: String, mode: ProxyMode, strict: Bool, cassette: CassetteSession,
        store: StoreResources? = nil, missingFile: Bool = false
    ) {
        self.store = store
        self.missingFile = missingFile
        self.id = id
        self.name = name
        self.mode = mode
        self.strict = strict
        self.cassette = cassette
    }

    /// A request of this session starts: the session is in use until `end()`.
    func begin() {
        state.withLock {
            $0.lastUsed = .now
            $0.inFlight += 1
        }
    }

    /// A request of this session has its answer (recorded first, when the session records).
    func end() {
        let waiters = state.withLock { state -> [DispatchSemaphore] in
            state.lastUsed = .now
            state.inFlight -= 1
            guard state.inFlight == 0 else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.signal() }
    }

    /// A streamed answer of this session starts being recorded: the session is in use until the returned
    /// release runs (once its recording is handed over), and `cut` records it as it stands should the
    /// session end first (`cutOpenStreams`). The release may run any number of times; the first counts.
    func holdStream(cut: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        let number = state.withLock { state -> Int in
            state.lastUsed = .now
            state.inFlight += 1
            state.nextStream += 1
            state.openStreams[state.nextStream] = cut
            return state.nextStream
        }
        return { [self] in
            let held = state.withLock { $0.openStreams.removeValue(forKey: number) != nil }
            if held { end() }
        }
    }

    /// Records every stream still open as it stands (each `cut` hands its recording over and releases it).
    func cutOpenStreams() {
        let cuts = state.withLock { Array($0.openStreams.values) }
        for cut in cuts { cut() }
    }

    /// Blocks the calling thread (never an event loop: the sessions' queue) until no request of this
    /// session is in flight, or `limit` has passed; woken by the last `end()`, with no polling.
    func waitUntilIdle(within limit: Duration) {
        let waiter = DispatchSemaphore(value: 0)
        let busy = state.withLock { state -> Bool in
            guard state.inFlight > 0 else { return false }
            state.idleWaiters.append(waiter)
            return true
        }
        guard busy else { return }
        _ = waiter.wait(timeout: .now() + .nanoseconds(Int(ReplayDelay.nanoseconds(limit))))
    }

    /// Whether the session has answered everything and not been used for `timeout`.
    func isIdle(for timeout: Duration, now: ContinuousClock.Instant) -> Bool {
        state.withLock { $0.inFlight == 0 && now - $0.lastUsed >= timeout }
    }

    func noteReplay() { state.withLock { $0.replayed += 1 } }

    /// Keeps a miss's report (`MissReport.json`) for the summary, as `{"method", "url", "label", "line",
    /// "nearest"}` (`label` only for a request that has one; `line`, `MissReport.line`, when given).
    func noteMiss(_ report: JSONValue, line: String? = nil) {
        var entry: JSONObject = [:]
        if case .object(let request)? = report["request"] {
            entry["method"] = request["method"] ?? .null
            entry["url"] = request["url"] ?? .null
            if let label = request["label"] { entry["label"] = label }
        }
        if let line { entry["line"] = .string(line) }
        entry["nearest"] = report["nearest"] ?? .array([])
        state.withLock { state in
            state.missCount += 1
            if state.misses.count < Self.keptMisses { state.misses.append(.object(entry)) }
        }
    }

    /// `{"id", "cassette", "mode", "strict"}`, as `GET /__kakapo/sessions` lists it.
    var listing: JSONValue {
        .object([
            "id": .string(id), "cassette": .string(name), "mode": .string(mode.rawValue), "strict": .bool(strict),
            "store": .string(store == nil ? "shared" : "own"),
        ])
    }

    /// The summary `DELETE /__kakapo/sessions/{id}` answers, once the cassette is saved (`saveError` when it
    /// could not be).
    func summary(saveError: String?) -> JSONValue {
        let (replayed, misses, missCount) = state.withLock { ($0.replayed, $0.misses, $0.missCount) }
        let snapshot = cassette.snapshot
        let unused = cassette.unusedPositions.compactMap { position -> JSONValue? in
            guard position < snapshot.interactions.count else { return nil }
            let request = snapshot.interactions[position].request
            var entry: JSONObject = [
                "interaction": .number(JSONNumber(position)), "method": .string(request.method.rawValue),
                "url": .string(cassette.redactor.redactedURL(of: request)),
            ]
            if let label = RequestLabel.of(request) { entry["label"] = .string(label) }
            return .object(entry)
        }
        var body: JSONObject = [
            "id": .string(id), "cassette": .string(name), "mode": .string(mode.rawValue), "strict": .bool(strict),
            "replayed": .number(JSONNumber(replayed)), "recorded": .number(JSONNumber(cassette.recordedCount)),
            "misses": .array(misses), "unused": .array(unused),
        ]
        if missCount > misses.count { body["missCount"] = .number(JSONNumber(missCount)) }
        if missingFile, mode != .passthrough {
            body["warning"] = .string("the cassette \(name) does not exist: every request missed")
        }
        if let saveError { body["saveError"] = .string(saveError) }
        return .object(body)
    }
}
