import Foundation

/// A request body sent upstream while it is still arriving from the client: the server appends pieces
/// as it reads them, libcurl takes them as the upstream does. When more than `window` bytes wait here,
/// `append` answers false and the server stops reading from its client until `onDrained` is called, so
/// an upload of any size costs at most about `window` bytes of memory.
public final class RequestBodyStream: @unchecked Sendable {
    // @unchecked Sendable: every stored var below is read and written only with `lock` held.
    /// The body's length when the client announced it (`Content-Length`); nil for a chunked upload.
    public let length: Int?
    public let window: Int
    private let lock = NSLock()
    private var pieces: [[UInt8]] = []
    private var head = 0
    private var offset = 0
    private var buffered = 0
    private var finished = false
    private var failed = false
    private var holding = false
    private var transferWaiting = false
    private var resumer: TransferResumer?
    private var drained: (@Sendable () -> Void)?

    public init(length: Int?, window: Int = 1 << 20) {
        self.length = length
        self.window = window
    }

    /// Called (on libcurl's thread) once the server may read from its client again.
    public func onDrained(_ action: @escaping @Sendable () -> Void) {
        lock.lock()
        drained = action
        lock.unlock()
    }

    /// Adds body bytes; false when the server should stop reading until `onDrained` is called.
    public func append(_ bytes: [UInt8]) -> Bool {
        lock.lock()
        pieces.append(bytes)
        buffered += bytes.count
        let wake = transferWaiting ? resumer : nil
        transferWaiting = false
        let keepReading = buffered <= window
        if !keepReading { holding = true }
        lock.unlock()
        wake?.resume()
        return keepReading
    }

    /// The whole body has arrived.
    public func finish() { end(failed: false) }

    /// The client went away before the end: the upstream request is abandoned.
    public func fail() { end(failed: true) }

    private func end(failed: Bool) {
        lock.lock()
        finished = true
        self.failed = self.failed || failed
        let wake = transferWaiting ? resumer : nil
        transferWaiting = false
        lock.unlock()
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
        lock.lock()
        if failed {
            lock.unlock()
            return .abort
        }
        var copied = 0
        while copied < buffer.count && head < pieces.count {
            let piece = pieces[head]
            let count = min(buffer.count - copied, piece.count - offset)
            piece.withUnsafeBytes { source in
                buffer.baseAddress!.advanced(by: copied).copyMemory(
                    from: source.baseAddress!.advanced(by: offset), byteCount: count)
            }
            copied += count
            offset += count
            if offset == piece.count {
                pieces[head] = []
                head += 1
                offset = 0
            }
        }
        if head > 64 && head * 2 > pieces.count {
            pieces.removeFirst(head)
            head = 0
        }
        buffered -= copied
        var wake: (@Sendable () -> Void)?
        if holding && buffered <= window / 2 {
            holding = false
            wake = drained
        }
        let result: Read
        if copied > 0 {
            result = .bytes(copied)
        } else if finished {
            result = .end
        } else {
            transferWaiting = true
            self.resumer = resumer
            result = .pause
        }
        lock.unlock()
        wake?()
        return result
    }
}
