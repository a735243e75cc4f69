import CCurl
import Foundation
import KakapoHTTP

/// A thread that runs many libcurl transfers at once on one multi handle, woken by socket readiness
/// (`curl_multi_poll`) or by new work (`curl_multi_wakeup`); no thread waits for one transfer. Easy
/// handles are reused, and the multi handle keeps connections to upstreams alive between transfers.
///
/// At most `limit` transfers move at once; more wait their turn here. A transfer held by its client (a
/// paused answer the client does not read, an upload the client does not send) costs nothing until it
/// is resumed and does not count against that limit, so clients that stall cannot take the places other
/// clients' transfers need; one held longer than the configured timeout is abandoned (its caller hears
/// a timeout), so a stalled client cannot keep an upstream connection either.
final class CurlMultiLoop: @unchecked Sendable {
    // @unchecked Sendable: `incoming`, `resuming` and `stopped` are only touched with `lock` held; the
    // rest only on the loop's thread.
    struct Job {
        let request: HTTP.Request
        let url: String
        /// Whether a streamed answer's body is kept for the completion.
        let keepsStreamedBody: Bool
        /// Told about a streamed answer as it arrives; nil buffers every answer.
        let onStream: (@Sendable (UpstreamStreamEvent) -> StreamDisposition)?
        /// A body still arriving from the client, sent as it comes; nil sends `request.body`.
        var bodyStream: RequestBodyStream? = nil
        let completion: @Sendable (Result<HTTP.Response, UpstreamError>) -> Void
    }

    private let multi: UnsafeMutableRawPointer
    private let configuration: UpstreamConfiguration
    private let caBundle: [UInt8]?
    private let lock = NSLock()
    private var incoming: [Job] = []
    /// Transfers to resume: their handle's address and their serial number.
    private var resuming: [(address: UInt, serial: Int)] = []
    private var serial = 0
    private var stopped = false
    private var finished = false
    private let done = NSCondition()
    private var active: [UnsafeMutableRawPointer: CurlHandle] = [:]
    private var stopDeadline: ContinuousClock.Instant?
    private var idle: [CurlHandle] = []
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
        guard let multi = curl_multi_init() else { return nil }
        self.limit = max(1, connections)
        self.ceiling = 4 * limit
        self.multi = multi
        self.configuration = configuration
        self.caBundle = caBundle
        let thread = Thread { [self] in run() }
        thread.name = "kakapo-upstream"
        thread.start()
    }

    deinit { curl_multi_cleanup(multi) }

    func submit(_ job: Job) {
        lock.lock()
        if stopped {
            lock.unlock()
            job.completion(.failure(UpstreamError(code: .other, message: "the upstream client is shut down")))
            return
        }
        incoming.append(job)
        lock.unlock()
        curl_multi_wakeup(multi)
    }

    private func resume(address: UInt, serial: Int) {
        lock.lock()
        resuming.append((address, serial))
        lock.unlock()
        curl_multi_wakeup(multi)
    }

    private func run() {
        while true {
            lock.lock()
            let jobs = incoming
            let resumed = resuming
            let stopping = stopped
            incoming.removeAll(keepingCapacity: true)
            resuming.removeAll(keepingCapacity: true)
            lock.unlock()
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
            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            var code = CURLE_OK
            while let easy = kakapo_curl_multi_next_done(multi, &code) {
                curl_multi_remove_handle(multi, easy)
                guard let handle = active.removeValue(forKey: easy) else { continue }
                let completion = handle.completion
                let result = handle.finish(code)
                handle.completion = nil
                idle.append(handle)
                completion?(result)
            }
            // Places freed by transfers that ended are taken at once, not after the next wake-up.
            admitQueued()
            _ = curl_multi_poll(multi, nil, 0, stopping ? 100 : 1000, nil)
        }
        idle.removeAll()
        done.lock()
        finished = true
        done.broadcast()
        done.unlock()
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
        idle.append(handle)
        if let error { completion?(.failure(error)) }
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
            job.request, url: job.url, configuration: configuration, caBundle: caBundle,
            keepsStreamedBody: job.keepsStreamedBody, onStream: job.onStream, bodyStream: job.bodyStream,
            resumer: resumer)
        handle.completion = job.completion
        active[easy] = handle
        curl_multi_add_handle(multi, easy)
    }

    /// Lets transfers in progress and queued finish, then stops the thread.
    func shutdown() {
        lock.lock()
        stopped = true
        lock.unlock()
        curl_multi_wakeup(multi)
        done.lock()
        while !finished { done.wait() }
        done.unlock()
    }
}
