import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A plain TCP connection to 127.0.0.1, for sending bytes no HTTP client would send.
public final class RawConnection {
    private let socketDescriptor: Int32

    /// Connects to 127.0.0.1:`port`; reads give up after `timeout` seconds.
    public init(port: Int, timeout: Double = 5) throws {
        #if canImport(Glibc)
            socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            socketDescriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            // The descriptor is closed by deinit, which runs for an initializer that throws here.
            let reason = String(cString: strerror(errno))
            throw KakapoProcess.Failure(description: "cannot connect to port \(port): \(reason)")
        }
        var limit = timeval()
        limit.tv_sec = .init(Int(timeout))
        limit.tv_usec = .init(Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(socketDescriptor) }

    public func send(_ text: String) { send(bytes: Array(text.utf8)) }

    /// Sends all of `bytes` (or as much as the peer takes before it closes: no SIGPIPE on Linux).
    public func send(bytes: [UInt8]) {
        #if canImport(Glibc)
            let flags = Int32(MSG_NOSIGNAL)
        #else
            let flags: Int32 = 0
        #endif
        bytes.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let wrote = Foundation.send(socketDescriptor, raw.baseAddress! + sent, raw.count - sent, flags)
                if wrote <= 0 { return }
                sent += wrote
            }
        }
    }

    /// Closes the sending half: the peer reads the end of the stream, and can still answer.
    public func finishSending() { shutdown(socketDescriptor, Int32(SHUT_WR)) }

    /// Reads until the peer closes, the timeout passes, or `until` returns true for what arrived.
    /// Returns the text and whether the peer closed the connection.
    public func receive(until done: (String) -> Bool = { _ in false }) -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socketDescriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { return (String(decoding: received, as: UTF8.self), true) }
            if count < 0 { return (String(decoding: received, as: UTF8.self), false) }
            received.append(contentsOf: buffer[0..<count])
            if done(String(decoding: received, as: UTF8.self)) {
                return (String(decoding: received, as: UTF8.self), false)
            }
        }
    }

    /// Reads up to the end of a response's head; returns the head and how many body bytes came with it.
    public func receiveHead() -> (head: String, bodyBytes: Int) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end: [UInt8] = [13, 10, 13, 10]
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socketDescriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return (String(decoding: received, as: UTF8.self), 0) }
            received.append(contentsOf: buffer[0..<count])
            if let range = received.firstRange(of: end) {
                return (
                    String(decoding: received[..<range.upperBound], as: UTF8.self), received.count - range.upperBound
                )
            }
        }
    }

    /// Reads and counts bytes, keeping none, until `limit` have arrived, the peer closes, or the timeout
    /// passes; returns how many arrived.
    public func drain(upTo limit: Int) -> Int {
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 18)
        while total < limit {
            let wanted = min(buffer.count, limit - total)
            let count = buffer.withUnsafeMutableBytes { recv(socketDescriptor, $0.baseAddress, wanted, 0) }
            if count <= 0 { break }
            total += count
        }
        return total
    }

    /// Closes the connection now.
    public func closeNow() { shutdown(socketDescriptor, Int32(SHUT_RDWR)) }
}
