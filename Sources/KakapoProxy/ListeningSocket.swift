import KakapoEngine
import NIOCore

#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// The server's listening socket, made here instead of by NIO (which leaves it inheritable) so that it is
/// close-on-exec from its first instant: a process Kakapo starts (the runtime's `swift-backtrace` after a
/// crash among them) must not hold the port.
enum ListeningSocket {
    /// A TCP socket bound to `host:port`, close-on-exec, with `SO_REUSEADDR`; NIO makes it listen.
    static func bound(host: String, port: Int) throws -> NIOBSDSocket.Handle {
        let address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        #if canImport(Glibc)
            let descriptor = socket(
                address.protocol.rawValue, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let descriptor = socket(address.protocol.rawValue, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        #if !canImport(Glibc)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        #endif
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let result = address.withSockAddr { pointer, size in bind(descriptor, pointer, socklen_t(size)) }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            throw IOError(errnoCode: code, reason: "bind to \(address)")
        }
        return descriptor
    }
}

extension ListeningAddress {
    /// Where a connection whose local end is `local` reached a server configured to bind `configuredHost`.
    init(configuredHost: String, local: SocketAddress?) {
        self.init(configuredHost: configuredHost, localIP: local?.ipAddress, port: local?.port)
    }

    /// The address of a connection that arrived at `local`, knowing every port Kakapo listens on (`pipeline`'s
    /// listeners), so a request or tunnel to any of them is to Kakapo itself.
    init(configuredHost: String, local: SocketAddress?, pipeline: RequestPipeline) {
        self.init(configuredHost: configuredHost, local: local)
        let ports = pipeline.listeners.withLock { $0 }
        otherPorts = [ports.proxy, ports.admin].compactMap { $0 }.filter { $0 != local?.port }
    }

    /// Whether a connected socket's peer is Kakapo's own listening address (a blind tunnel whose host name
    /// resolved to this machine).
    func isSelf(_ address: SocketAddress?) -> Bool {
        guard let address, let port = address.port, let ip = address.ipAddress else { return false }
        return isSelf(host: ip, port: port)
    }
}
