#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Standard output and error written with write(2). When the reader went away (a parent that closed the
/// pipe, a `| head` that ended), the text is lost and Kakapo goes on: FileHandle's write stops the process
/// with a fatal error on EPIPE, and SIGPIPE's default action would kill it, both before a recording is
/// saved.
enum StandardStream {
    /// Writes all of `text` to `descriptor` (1 or 2), giving up quietly on an error other than EINTR.
    static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            bytes = bytes.dropFirst(written)
        }
    }

    /// A server ignores SIGPIPE, so a closed standard error costs it its log lines only (logging writes with
    /// stdio, which reports EPIPE and goes on); commands it starts get the default back (`ExecChild`).
    static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }
}

/// write(2), named apart from `StandardStream.write`.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.write(descriptor, buffer, count)
    #else
        Darwin.write(descriptor, buffer, count)
    #endif
}
