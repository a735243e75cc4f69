import Synchronization

/// A request body sent upstream while it is still arriving from the client: the server appends pieces
/// as it reads them, libcurl takes them as the upstream does. When more than `window` bytes wait here,
/// `append` answers false and the server stops reading from its client until `onDrained` is called, so
/// an upload of any size costs at most about `window` bytes of memory.
public final class RequestBodyStream: Sendable {
    /// The body's length when the client announced it (`Content-Length`); nil for a chunked upload.
    public let length: Int?
    public let window: Int
    private let state = Mutex(State())

    private struct State {
        var pieces: [[UInt8]] = []
        var head = 0
        var offset = 0
        var buffered = 0
        var finished = false
        var failed = false
        var holding = false
        var transferWaiting = false
        var resumer: TransferResumer?
        var drained: (@Sendable () -> Void)?

        /// The resumer of a transfer waiting for bytes, which may now go on.
        mutating func takeWaiting() -> TransferResumer? {
            defer { transferWaiting = false }
            return transferWaiting ? resumer : nil
        }
    }

    public init(length: Int?, window: Int = 1 << 20) {
        self.length = length
        self.window = window
    }

    /// Called (on libcurl's thread) once the server may read from its client again.
    public func onDrained(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.drained = action }
    }

    /// Adds body bytes; false when the server should stop reading until `onDrained` is called.
    public func append(_ bytes: [UInt8]) -> Bool {
        let (wake, keepReading) = state.withLock { state in
            state.pieces.append(bytes)
            state.buffered += bytes.count
            let keepReading = state.buffered <= window
            if !keepReading { state.holding = true }
            return (state.takeWaiting(), keepReading)
        }
        wake?.resume()
        return keepReading
    }

    /// The whole body has arrived.
    public func finish() { end(failed: false) }

    /// The client went away before the end: the upstream request is abandoned.
    public func fail() { end(failed: true) }

    private func end(failed: Bool) {
        let wake = state.withLock { state in
            state.finished = true
            state.failed = state.failed || failed
            return state.takeWaiting()
        }
        wake?.resume()
    }

    /// What a read from libcurl got.
    enum Read {
        case bytes(Int)
        /// Nothing yet: the transfer pauses until more arrives.
        case pause
        case end
        case abort
    }

    /// Copies waiting bytes into `buffer` (libcurl's thread); `resumer` continues the transfer after a
    /// pause.
    func read(into buffer: UnsafeMutableRawBufferPointer, resumer: TransferResumer) -> Read {
        let (result, wake) = state.withLock { state -> (Read, (@Sendable () -> Void)?) in
            if state.failed { return (.abort, nil) }
            var copied = 0
            while copied < buffer.count && state.head < state.pieces.count {
                let offset = state.offset
                let count = state.pieces[state.head].withUnsafeBytes { source in
                    let count = min(buffer.count - copied, source.count - offset)
                    buffer.baseAddress!.advanced(by: copied).copyMemory(
                        from: source.baseAddress!.advanced(by: offset), byteCount: count)
                    return count
                }
                copied += count
                state.offset += count
                if state.offset == state.pieces[state.head].count {
                    state.pieces[state.head] = []
                    state.head += 1
                    state.offset = 0
                }
            }
            if state.head > 64 && state.head * 2 > state.pieces.count {
                state.pieces.removeFirst(state.head)
                state.head = 0
            }
            state.buffered -= copied
            var wake: (@Sendable () -> Void)?
            if state.holding && state.buffered <= window / 2 {
                state.holding = false
                wake = state.drained
            }
            if copied > 0 { return (.bytes(copied), wake) }
            if state.finished { return (.end, wake) }
            state.transferWaiting = true
            state.resumer = resumer
            return (.pause, wake)
        }
        wake?()
        return result
    }
}
