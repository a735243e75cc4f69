import KakapoProxy
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Memory freed after a load leaves goes back to the system (issue 49: 400 clients that never read left
/// the process at 914 MB, still held 40 minutes later).
@Suite("Heap returner")
struct HeapReturnerTests {
    @Test("a heap is trimmed when it holds more than the threshold free and more free than in use")
    func decision() {
        #expect(HeapReturner.worthTrimming(free: 800 << 20, used: 6 << 20, threshold: 32 << 20))
        #expect(!HeapReturner.worthTrimming(free: 16 << 20, used: 1 << 20, threshold: 32 << 20))
        // Under a steady load freed memory is soon used again: left alone.
        #expect(!HeapReturner.worthTrimming(free: 200 << 20, used: 300 << 20, threshold: 32 << 20))
    }

    #if os(Linux)
        /// How many of the pages inside `block` (`size` bytes) are resident.
        static func residentPages(_ block: UnsafeMutableRawPointer, size: Int) -> Int {
            let page = Int(sysconf(Int32(_SC_PAGESIZE)))
            // Whole pages inside the block only: its edges share pages with its neighbours.
            let start = (Int(bitPattern: block) + page - 1) / page * page
            let end = (Int(bitPattern: block) + size) / page * page
            guard end > start else { return 0 }
            var states = [UInt8](repeating: 0, count: (end - start) / page)
            let result = mincore(UnsafeMutableRawPointer(bitPattern: start), end - start, &states)
            guard result == 0 else { return -1 }
            return states.count { $0 & 1 == 1 }
        }

        @Test(
            "64 MiB freed in 16 KiB blocks between live ones is given back to the system",
            .enabled(
                if: sysconf(Int32(_SC_PAGESIZE)) == 4096,
                "16 KiB blocks hold whole pages of 4 KiB only (with 64 KiB pages, blocks large enough would be mmapped)"
            ))
        func freedBlocksLeaveMemory() {
            let size = 16 << 10
            var blocks: [UnsafeMutableRawPointer] = []
            var pins: [UnsafeMutableRawPointer] = []
            for _ in 0..<4096 {
                let block = malloc(size)!
                memset(block, 1, size)
                blocks.append(block)
                // A small live allocation after each block keeps the freed ones apart (fragmented), as the
                // buffers of clients that came and went are: glibc trims only the top of a heap by itself.
                pins.append(malloc(64)!)
            }
            let resident = blocks.reduce(0) { $0 + Self.residentPages($1, size: size) }
            #expect(resident >= 4096 * 3)
            for block in blocks { free(block) }
            #expect(HeapReturner.usage.free >= 60 << 20, "\(HeapReturner.usage)")
            HeapReturner.trim()
            // The freed blocks' pages are no longer resident (mincore); without the trim all of them stay.
            // Other tests' threads may share this thread's arena (glibc keeps 8 per core) and take blocks back
            // meanwhile: 35 % of the pages were back in use once in the whole suite on 2 cores.
            let left = blocks.reduce(0) { $0 + Self.residentPages($1, size: size) }
            #expect(left < resident / 2, "\(left) of \(resident) pages still resident")
            for pin in pins { free(pin) }
        }
    #endif
}
