import Dispatch
import Foundation

/// Turns SIGINT and SIGTERM into events: the default action (dying mid-write) is switched off, and the
/// first signal resumes `next()`.
final class SignalWaiter: @unchecked Sendable {
    // @unchecked Sendable: `handler` and `pending` are only touched on `queue`.
    private let queue = DispatchQueue(label: "kakapo-signals")
    private var sources: [DispatchSourceSignal] = []
    private var handler: (@Sendable (Int32) -> Void)?
    private var pending: [Int32] = []

    init(signals: [Int32]) {
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [unowned self] in deliver(number) }
            source.resume()
            sources.append(source)
        }
    }

    private func deliver(_ number: Int32) {
        if let handler {
            self.handler = nil
            handler(number)
        } else {
            pending.append(number)
        }
    }

    /// Calls `handler` once, for the next signal (or one that already arrived).
    func onNext(_ handler: @escaping @Sendable (Int32) -> Void) {
        queue.async { [self] in
            if !pending.isEmpty {
                handler(pending.removeFirst())
            } else {
                self.handler = handler
            }
        }
    }

    /// Waits for the next signal.
    func next() async -> Int32 {
        await withCheckedContinuation { continuation in
            onNext { continuation.resume(returning: $0) }
        }
    }
}
