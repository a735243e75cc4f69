import Logging
import NIOCore
import Synchronization

/// `--slow-warning`: finds requests in flight with no bytes either way for the limit, and has each say once
/// what it waits for. One sweep a second per event loop walks that loop's connections (registered when their
/// first request comes, on the loop, with no lock) and reads what each one's `WatchedRequest` counts; nothing
/// is timed per request and nothing on a request's way costs more than a few stores.
final class SlowRequestWatch: Sendable {
    /// What a sweep asks of a connection.
    protocol Watched: AnyObject {
        /// Says (once) what its request waits for, if it has been quiet for `limit` at `now`.
        func checkSlow(now: NIODeadline, limit: TimeAmount)
    }

    /// How long a request may be quiet before it is said.
    let limit: TimeAmount
    /// How often each loop is swept.
    let period: TimeAmount
    /// Each event loop's connections, touched on that loop only.
    private let loops: [ObjectIdentifier: NIOLoopBoundBox<[ObjectIdentifier: any Watched]>]
    private let sweeps = Mutex<[RepeatedTask]>([])

    /// A watch over the loops of `group`, for requests quiet for `limit`; swept every `period` (at most the limit).
    init(group: any EventLoopGroup, limit: TimeAmount, period: TimeAmount = .seconds(1)) {
        self.limit = limit
        self.period = min(period, limit)
        var loops: [ObjectIdentifier: NIOLoopBoundBox<[ObjectIdentifier: any Watched]>] = [:]
        for loop in group.makeIterator() {
            loops[ObjectIdentifier(loop)] = .makeBoxSendingValue([:], eventLoop: loop)
        }
        self.loops = loops
    }

    /// A watch for `seconds` (`ProxyConfiguration.slowWarning`, at most a day) over `group`; nil for 0 (or a
    /// value that is not a number of seconds), which says nothing.
    static func make(seconds: Double, group: any EventLoopGroup) -> SlowRequestWatch? {
        guard seconds.isFinite, seconds > 0 else { return nil }
        let milliseconds = Int64(min(seconds, 86_400) * 1000)
        return SlowRequestWatch(group: group, limit: .milliseconds(max(milliseconds, 1)))
    }

    /// Starts sweeping every loop.
    func start() {
        var tasks: [RepeatedTask] = []
        for connections in loops.values {
            let loop = connections.eventLoop
            tasks.append(
                loop.scheduleRepeatedTask(initialDelay: period, delay: period) { [limit] _ in
                    let now = NIODeadline.now()
                    for member in connections.value.values { member.checkSlow(now: now, limit: limit) }
                })
        }
        sweeps.withLock { $0 = tasks }
    }

    /// Stops sweeping.
    func stop() {
        for task in sweeps.withLock({ $0 }) { task.cancel() }
    }

    /// Watches `member` from now on; called on `loop`. A loop outside the group (none is) is not swept.
    func add(_ member: any Watched, on loop: any EventLoop) {
        loops[ObjectIdentifier(loop)]?.value[ObjectIdentifier(member)] = member
    }

    /// Stops watching `member`; called on `loop`.
    func remove(_ member: any Watched, on loop: any EventLoop) {
        loops[ObjectIdentifier(loop)]?.value[ObjectIdentifier(member)] = nil
    }
}
