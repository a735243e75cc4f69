import NIOCore
import NIOPosix

extension TunnelHandler {
    /// Opens the upstream end of a tunnel: a TCP connection to `host:port` on `loop`, given up after
    /// `timeout` seconds.
    static func connect(to host: String, port: Int, timeout: Double, on loop: any EventLoop) -> EventLoopFuture<
        any Channel
    > {
        ClientBootstrap(group: loop)
            .connectTimeout(.milliseconds(Int64(timeout * 1000)))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: host, port: port)
    }

    /// Joins a client's connection to an upstream connection: the HTTP handlers and the request deadline
    /// go (a tunnel may carry one long transfer), the idle limit moves to the tunnel (closed when neither
    /// side has sent anything for that long), `beforeJoining` runs with the connection raw, and from then
    /// on bytes pass both ways untouched.
    static func splice(_ channel: any Channel, with upstream: any Channel, beforeJoining: () -> Void = {}) throws {
        let operations = channel.pipeline.syncOperations
        let timeouts = try? operations.handler(type: ConnectionTimeoutHandler.self)
        let (near, far) = pair(idleTimeout: timeouts?.idleTimeout)
        HTTPConnectionSettings.removeHTTPHandlers(from: operations)
        if let timeouts {
            operations.removeHandler(timeouts, promise: nil)
        }
        beforeJoining()
        try operations.addHandler(near)
        try upstream.pipeline.syncOperations.addHandler(far)
    }
}
