import CHeap
import Dispatch

/// Gives memory the server no longer uses back to the system once a load has left (glibc; elsewhere the
/// allocator does it by itself).
///
/// glibc keeps freed memory in its arenas, one per thread that allocated it, and returns to the system
/// only what sits at the top of an arena: after hundreds of clients came and went, each with a buffer of
/// up to a window's size, the process kept its peak for as long as it ran. Every `interval` seconds this
/// looks at what the allocator holds free; when that is more than `threshold` bytes and more than what is
/// in use, it hands the free pages back (`malloc_trim`). It runs on a utility queue, never on an event
/// loop; under a steady load free memory stays below what is in use, and nothing is done.
package final class HeapReturner: @unchecked Sendable {
    // @unchecked Sendable: the timer is set up in `init` and only cancelled after (a thread-safe call).
    private let timer: any DispatchSourceTimer

    /// Starts looking every `interval` seconds (at least one).
    package init(interval: Int = 10, threshold: Int = 32 << 20) {
        let interval = max(1, interval)
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        timer.schedule(deadline: .now() + .seconds(interval), repeating: .seconds(interval), leeway: .seconds(1))
        timer.setEventHandler { Self.returnFreeMemory(threshold: threshold) }
        timer.resume()
        self.timer = timer
    }

    deinit { timer.cancel() }

    /// Stops looking.
    package func stop() { timer.cancel() }

    /// What the allocator holds free and in use, in bytes (zeros where it cannot tell).
    package static var usage: (free: Int, used: Int) {
        var free = 0
        var used = 0
        kakapo_heap_usage(&free, &used)
        return (free, used)
    }

    /// Gives free pages back when the allocator holds more than `threshold` free bytes, and more free than
    /// in use; true when it did.
    @discardableResult
    package static func returnFreeMemory(threshold: Int) -> Bool {
        let (free, used) = usage
        guard worthTrimming(free: free, used: used, threshold: threshold) else { return false }
        trim()
        return true
    }

    /// Whether a heap with `free` and `used` bytes is worth trimming: more than `threshold` free, and more
    /// free than in use (a load has left; under a steady one, freed memory is soon used again).
    package static func worthTrimming(free: Int, used: Int, threshold: Int) -> Bool {
        free > threshold && free > used
    }

    /// Hands every free page the allocator holds back to the system (`malloc_trim(0)`).
    package static func trim() { kakapo_heap_trim() }
}
