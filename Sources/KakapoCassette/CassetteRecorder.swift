import Dispatch
import Foundation
import KakapoHTTP

/// The one serial worker that takes a `CassetteSession`'s recordings off its callers' threads (libcurl's
/// transfer loop): jobs run one at a time, in the order they were submitted, on a serial dispatch queue of
/// their own (not Swift's cooperative pool, since a job writes to a file).
///
/// The jobs waiting are bounded in bytes (`limit`): a caller that would take them past it waits until the
/// recorder has caught up, so a disk slower than the upstream slows the recording down instead of filling
/// memory. A job larger than the limit is taken when nothing else waits. The recorder's own thread (a
/// `then` callback) never waits: what it submits is taken at once, and `drain` returns at once there.
final class CassetteRecorder: @unchecked Sendable {
    // @unchecked Sendable: `queued`, `submitted` and `finished` are read and written only while `condition`
    // is locked; `queue` and `onQueue` are immutable and thread-safe.
    /// The most bytes of jobs that may wait before a caller is held up.
    let limit: Int
    private let queue: DispatchQueue
    /// Set on `queue`, so the recorder can tell its own thread.
    private let onQueue = DispatchSpecificKey<Bool>()
    private let condition = NSCondition()
    /// Bytes of the jobs submitted and not finished.
    private var queued = 0
    private var submitted = 0
    private var finished = 0

    init(label: String, limit: Int) {
        self.limit = limit
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: onQueue, value: true)
    }

    /// Whether the caller runs on the recorder (inside a job or its `then`).
    var isCurrent: Bool { DispatchQueue.getSpecific(key: onQueue) == true }

    /// Queues `work`, which holds about `bytes` bytes, to run after everything submitted before it, then
    /// `then`; returns once it is queued (after waiting, when the queue is over its limit, unless `waits` is
    /// false: for callers on an event loop, which must never wait).
    func submit(
        bytes: Int, waits: Bool = true, _ work: @escaping @Sendable () -> Void,
        then: @escaping @Sendable () -> Void = {}
    ) {
        let current = isCurrent
        condition.lock()
        while waits && !current && queued > 0 && queued + bytes > limit { condition.wait() }
        queued += bytes
        submitted += 1
        condition.unlock()
        queue.async { [self] in
            work()
            condition.lock()
            queued -= bytes
            condition.broadcast()
            condition.unlock()
            then()
            condition.lock()
            finished += 1
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Runs `work` after everything submitted before it and returns when it is done; on the recorder's
    /// own thread, runs it at once.
    func perform(bytes: Int, _ work: @escaping @Sendable () -> Void) {
        if isCurrent {
            work()
            return
        }
        let done = DispatchSemaphore(value: 0)
        submit(bytes: bytes, work, then: { done.signal() })
        done.wait()
    }

    /// Returns once every job submitted before the call has run, with its `then`; at once on the recorder's
    /// own thread.
    func drain() {
        guard !isCurrent else { return }
        condition.lock()
        let target = submitted
        while finished < target { condition.wait() }
        condition.unlock()
    }

    /// About how many bytes `interaction` holds, for the limit.
    static func cost(of interaction: Interaction) -> Int {
        func size(_ headers: HTTP.Headers) -> Int {
            headers.fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
        }
        let chunks = interaction.chunks?.reduce(0) { $0 + $1.bytes.count + 16 } ?? 0
        // A message costs its payload and about 384 bytes besides once redacted and encoded (measured; see
        // WebSocketRecorder.messageCost).
        let messages =
            interaction.webSocket?.messages.reduce(0) { total, message in
                switch message.payload {
                case .text(let text): total + text.utf8.count + 384
                case .binary(let bytes): total + bytes.count + 384
                }
            } ?? 0
        return 256 + interaction.request.target.utf8.count + interaction.request.body.count
            + size(interaction.request.headers) + interaction.response.body.count + size(interaction.response.headers)
            + chunks + messages
    }
}
