import CCurl
import Foundation
import KakapoHTTP
import Synchronization

/// A thread that runs many libcurl transfers at once on one multi handle, woken by socket readiness
/// (`SocketPoller`, driving `curl_multi_socket_action`) or by new work; no thread waits for one
/// transfer. Easy handles are reused, and the multi handle keeps connections to upstreams alive between
/// transfers.
///
/// At most `limit` transfers move at once; more wait their turn here. A transfer held by its client (a
/// paused answer the client does not read, an upload the client does not send) costs nothing until it
/// is resumed and does not count against that limit, so clients that stall cannot take the places other
/// clients' transfers need; one held longer than the configured timeout is abandoned (its caller hears
/// a timeout), so a stalled client cannot keep an upstream connection either.
final class CurlMultiLoop: @unchecked Sendable {
    // @unchecked Sendable: other threads touch only `inbox` (a Mutex) and `poller.wake()`; the rest is
    // the loop thread's alone.
    struct Job {
        let request: HTTP.Request
        let url: String
        /// The upstream proxy it goes through; nil: direct.
        let proxy: UpstreamProxy?
        /// Whether the request goes as cleartext HTTP/2 without asking first (an `h2c://` upstream).
        var http2PriorKnowledge = false
        /// Whether a streamed answer's body is kept for the completion.
        let keepsStreamedBody: Bool
        /// Told about a streamed answer as it arrives; nil buffers every answer.
        let onStream: (@Sendable (UpstreamStreamEvent) -> StreamDisposition)?
        /// A body still arriving from the client, sent as it comes; nil sends `request.body`.
        var bodyStream: RequestBodyStream? = nil
        let completion: @Sendable (Result<HTTP.Response, UpstreamError>) -> Void
    }

    /// What other threads hand the loop.
    private struct Inbox {
        var jobs: [Job] = []
        /// Transfers to resume: their handle's address and their serial number.
        var resuming: [(address: UInt, serial: Int)] = []
        var stopped = false
        /// The loop waits, or is about to, with nothing left to do: new work must wake it. While it
        /// runs, it takes new work on its next turn, and nobody pays for a wake-up.
        var sleeping = false
    }

    private let multi: UnsafeMutableRawPointer
    private let poller: SocketPoller
    private let configuration: UpstreamConfiguration
    private let caBundle: [UInt8]?
    private let inbox = Mutex(Inbox())
    private let finished = DispatchSemaphore(value: 0)
    private var serial = 0
    private var active: [UnsafeMutableRawPointer: CurlHandle] = [:]
    private var stopDeadline: ContinuousClock.Instant?
    private var idle: [CurlHandle] = []
    /// When libcurl wants to be called without a ready socket (a new or resumed transfer, a timeout);
    /// nil when it does not.
    private var timerDeadline: ContinuousClock.Instant?
    /// How many transfers may move at once (transfers held by their clients not counted).
    private let limit: Int
    /// How many transfers there may be at once, held ones included: four times `limit`.
    private let ceiling: Int
    /// Jobs waiting for a place, oldest first (from `queuedHead` on).
    private var queued: [Job] = []
    private var queuedHead = 0
    /// When `abandonHeldTooLong` last looked.
    private var lastHeldCheck = ContinuousClock.now

    /// Starts the loop's thread; at most `connections` transfers move at once (more wait their turn).
    init?(configuration: UpstreamConfiguration, caBundle: [UInt8]?, connections: Int) {
        CurlHandle.globalInit
        guard let poller = SocketPoller() else { return nil }
        guard let multi = curl_multi_init() else { return nil }
        self.limit = max(1, connections)
        self.ceiling = 4 * limit
        self.multi = multi
        self.poller = poller
        self.configuration = configuration
        self.caBundle = caBundle
        // libcurl says which sockets to watch and when to call it anyway (`curl_multi_socket_action`):
        // each turn of the loop costs what is ready, not every transfer in progress.
        let this = Unmanaged.passUnretained(self).toOpaque()
        _ = kakapo_curl_multi_setopt_socket(multi, curlSocketCallback, this)
        _ = kakapo_curl_multi_setopt_timer(multi, curlTimerCallback, this)
        // HTTP/2 upstreams carry many transfers at once on one connection (libcurl's default, said here
        // because h2c:// upstreams and gRPC count on it).
        _ = kakapo_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        let thread = Thread { [self] in run() }
        thread.name = "kakapo-upstream"
        thread.start()
    }

    deinit {
        // Cleaning up closes cached connections, which would tell an object being destroyed.
        _ = kakapo_curl_multi_setopt_socket(multi, nil, nil)
        _ = kakapo_curl_multi_setopt_timer(multi, nil, nil)
        curl_multi_cleanup(multi)
    }

    func submit(_ job: Job) {
        let (accepted, wake) = inbox.withLock { inbox -> (Bool, Bool) in
            guard !inbox.stopped else { return (false, false) }
            inbox.jobs.append(job)
            defer { inbox.sleeping = false }
            return (true, inbox.sleeping)
        }
        if wake { poller.wake() }
        if !accepted {
            job.completion(.failure(UpstreamError(code: .other, message: "the upstream client is shut down")))
        }
    }

    private func resume(address: UInt, serial: Int) {
        let wake = inbox.withLock { inbox in
            inbox.resuming.append((address, serial))
            defer { inbox.sleeping = false }
            return inbox.sleeping
        }
        if wake { poller.wake() }
    }

    /// libcurl's socket callback: watch `fd` as it asks.
    fileprivate func watch(_ fd: Int32, _ what: Int32) { poller.watch(fd, what) }

    /// libcurl's timer callback: call it back in `milliseconds` (-1: no need).
    fileprivate func setTimer(_ milliseconds: Int) {
        timerDeadline = milliseconds < 0 ? nil : .now + .milliseconds(milliseconds)
    }

    private func run() {
        var running: Int32 = 0
        while true {
            let (jobs, resumed, stopping) = inbox.withLock { inbox in
                defer {
                    inbox.jobs = []
                    inbox.resuming = []
                }
                return (inbox.jobs, inbox.resuming, inbox.stopped)
            }
            queued += jobs
            for (address, serial) in resumed {
                // A transfer that ended meanwhile is not resumed (its handle may carry another one).
                guard let easy = UnsafeMutableRawPointer(bitPattern: address), let handle = active[easy],
                    handle.serial == serial
                else { continue }
                handle.sink?.resumed()
                _ = kakapo_curl_resume(easy)
            }
            abandonHeldTooLong()
            admitQueued()
            if stopping {
                // Transfers still running a second after shutdown began (an endless event stream) are
                // abandoned: their callers hear that the client shut down.
                let deadline = stopDeadline ?? ContinuousClock.now + .seconds(1)
                stopDeadline = deadline
                if active.isEmpty && queuedHead == queued.count { break }
                if ContinuousClock.now > deadline {
                    abandonAll()
                    break
                }
            }
            runTimerIfDue(&running)
            completeFinished()
            let mayWait = inbox.withLock { inbox in
                guard inbox.jobs.isEmpty && inbox.resuming.isEmpty && inbox.stopped == stopping else { return false }
                inbox.sleeping = true
                return true
            }
            poller.wait(timeout: mayWait ? waitTimeout(stopping: stopping) : 0) { fd, mask in
                _ = curl_multi_socket_action(multi, fd, mask, &running)
            }
            if mayWait { inbox.withLock { $0.sleeping = false } }
            runTimerIfDue(&running)
            completeFinished()
        }
        idle.removeAll()
        finished.signal()
    }

    /// How long the loop may wait for sockets: until libcurl's timer, and at most a second (100 ms
    /// while shutting down) so held transfers and the shutdown are looked at.
    private func waitTimeout(stopping: Bool) -> Int32 {
        let longest: Int64 = stopping ? 100 : 1000
        guard let timerDeadline else { return Int32(longest) }
        let remaining = timerDeadline - .now
        guard remaining > .zero else { return 0 }
        // Rounded up: waking a little early would only turn the loop once more for nothing.
        let milliseconds = (remaining + .nanoseconds(999_999)) / .milliseconds(1)
        return Int32(min(Int64(milliseconds), longest))
    }

    /// Calls libcurl when its timer is due: transfers just added or resumed start there.
    private func runTimerIfDue(_ running: inout Int32) {
        guard let deadline = timerDeadline, deadline <= .now else { return }
        timerDeadline = nil
        _ = curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running)
    }

    /// Hands finished transfers their results, then gives their places to waiting jobs at once.
    private func completeFinished() {
        var code = CURLE_OK
        while let easy = kakapo_curl_multi_next_done(multi, &code) {
            curl_multi_remove_handle(multi, easy)
            guard let handle = active.removeValue(forKey: easy) else { continue }
            let completion = handle.completion
            let result = handle.finish(code)
            handle.completion = nil
            keepIdle(handle)
            completion?(result)
        }
        admitQueued()
    }

    /// Starts waiting jobs while fewer than `limit` transfers move. Held transfers do not count, but
    /// there may be at most `ceiling` transfers in all (each keeps an upstream connection): past it, the
    /// one held longest is abandoned to make room.
    private func admitQueued() {
        guard queuedHead < queued.count else { return }
        // Held transfers are counted out only when it matters: with fewer transfers than may move, the
        // count of all of them is bound enough (this runs for every new transfer).
        var moving = active.count < limit ? active.count : active.values.count { $0.sink?.heldSince == nil }
        while moving < limit && queuedHead < queued.count {
            if active.count >= ceiling && !abandonLongestHeld() { break }
            start(queued[queuedHead])
            queuedHead += 1
            moving += 1
        }
        if queuedHead == queued.count {
            queued.removeAll(keepingCapacity: true)
            queuedHead = 0
        } else if queuedHead > 64 && queuedHead * 2 > queued.count {
            queued.removeFirst(queuedHead)
            queuedHead = 0
        }
    }

    /// Abandons the transfers whose clients held them longer than the timeout: a client that reads none
    /// of its answer, or sends none of its body, keeps no upstream connection and no place.
    private func abandonHeldTooLong() {
        // Looked at ten times a second at most: the loop may turn far more often under load.
        let now = ContinuousClock.now
        guard now - lastHeldCheck >= .milliseconds(100) else { return }
        lastHeldCheck = now
        for (easy, handle) in active where handle.sink?.heldTooLong(at: now) == true {
            abandon(easy, handle, crowded: false)
        }
    }

    /// Abandons the transfer held longest by its client; false when none is held.
    private func abandonLongestHeld() -> Bool {
        var longest: (easy: UnsafeMutableRawPointer, handle: CurlHandle, since: ContinuousClock.Instant)?
        for (easy, handle) in active {
            guard let since = handle.sink?.heldSince else { continue }
            if longest == nil || since < longest!.since { longest = (easy, handle, since) }
        }
        guard let longest else { return false }
        abandon(longest.easy, longest.handle, crowded: true)
        return true
    }

    /// Ends a transfer its client holds: its caller hears why, and the handle is free again.
    private func abandon(_ easy: UnsafeMutableRawPointer, _ handle: CurlHandle, crowded: Bool) {
        curl_multi_remove_handle(multi, easy)
        active.removeValue(forKey: easy)
        let completion = handle.completion
        let error = handle.sink?.heldError(url: handle.url, crowded: crowded)
        handle.completion = nil
        handle.abandon()
        keepIdle(handle)
        if let error { completion?(.failure(error)) }
    }

    /// Keeps a finished transfer's handle for the next one, up to `limit` of them: the handles of a crowd
    /// of held transfers (up to `ceiling`, each with libcurl's buffers) are let go once it has left.
    private func keepIdle(_ handle: CurlHandle) {
        if idle.count < limit { idle.append(handle) }
    }

    private func abandonAll() {
        for job in queued[queuedHead...] {
            job.completion(
                .failure(UpstreamError(code: .other, message: "the upstream client shut down before sending")))
        }
        queued.removeAll()
        queuedHead = 0
        for (easy, handle) in active {
            curl_multi_remove_handle(multi, easy)
            let completion = handle.completion
            handle.completion = nil
            handle.abandon()
            completion?(
                .failure(UpstreamError(code: .other, message: "the upstream client shut down before the answer ended")))
        }
        active.removeAll()
    }

    private func start(_ job: Job) {
        guard let handle = idle.popLast() ?? CurlHandle() else {
            job.completion(.failure(UpstreamError(code: .other, message: "libcurl could not create a handle")))
            return
        }
        let easy = handle.handle
        serial += 1
        handle.serial = serial
        let (address, current) = (UInt(bitPattern: easy), serial)
        let resumer = TransferResumer { [self] in resume(address: address, serial: current) }
        handle.start(
            job.request, url: job.url, proxy: job.proxy, http2PriorKnowledge: job.http2PriorKnowledge,
            configuration: configuration, caBundle: caBundle,
            keepsStreamedBody: job.keepsStreamedBody, onStream: job.onStream, bodyStream: job.bodyStream,
            resumer: resumer)
        handle.completion = job.completion
        active[easy] = handle
        curl_multi_add_handle(multi, easy)
    }

    /// Lets transfers in progress and queued finish, then stops the thread.
    func shutdown() {
        inbox.withLock { $0.stopped = true }
        poller.wake()
        finished.wait()
        // Whoever shuts down next (shutdown may be called again) finds the loop finished at once.
        finished.signal()
    }
}

private let curlSocketCallback: curl_socket_callback = { _, fd, what, userdata, _ in
    guard let userdata else { return 0 }
    Unmanaged<CurlMultiLoop>.fromOpaque(userdata).takeUnretainedValue().watch(fd, what)
    return 0
}

private let curlTimerCallback: curl_multi_timer_callback = { _, milliseconds, userdata in
    guard let userdata else { return 0 }
    Unmanaged<CurlMultiLoop>.fromOpaque(userdata).takeUnretainedValue().setTimer(milliseconds)
    return 0
}
