import KakapoUpstream
import NIOCore
import NIOPosix

extension TunnelHandler {
    /// Opens the upstream end of a tunnel: a TCP connection to `host:port` on `loop`, given up after
    /// `timeout` seconds; with a `proxy`, a connection to the proxy (over TLS for an `https://` one, with
    /// `tls`) that it has tunnelled to `host:port` with `CONNECT` (see `UpstreamProxyHandshake`). Failures
    /// of the proxy are `UpstreamError`s that name it without its credentials.
    static func connect(
        to host: String, port: Int, timeout: Double, through proxy: UpstreamProxy? = nil,
        tls: (any TLSOrigination)? = nil, on loop: any EventLoop
    ) -> EventLoopFuture<any Channel> {
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(.milliseconds(Int64(timeout * 1000)))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
        guard let proxy else { return bootstrap.connect(host: host, port: port) }
        if proxy.scheme == "https" && tls == nil {
            return loop.makeFailedFuture(
                UpstreamProxyFailure.unreachable(proxy, reason: "TLS to it needs ServerTLS.upstream"))
        }
        return bootstrap.connect(host: proxy.host, port: proxy.port)
            .flatMapErrorThrowing { error in
                throw UpstreamProxyFailure.unreachable(proxy, reason: "\(error)")
            }
            .flatMap { channel in
                guard proxy.scheme == "https", let tls else { return channel.eventLoop.makeSucceededFuture(channel) }
                return tls.secure(channel, host: proxy.host).map { channel }.flatMapErrorThrowing { error in
                    channel.close(promise: nil)
                    throw UpstreamProxyFailure.unreachable(proxy, reason: "TLS failed: \(error)")
                }
            }
            .flatMap { channel in
                let promise = channel.eventLoop.makePromise(of: Void.self)
                let handshake = UpstreamProxyHandshake(proxy: proxy, host: host, port: port, promise: promise)
                do {
                    let operations = channel.pipeline.syncOperations
                    try operations.addHandler(handshake)
                    guard let context = try? operations.context(handler: handshake) else {
                        throw UpstreamProxyFailure.unreachable(proxy, reason: "the connection closed")
                    }
                    handshake.start(context: context, seconds: timeout)
                } catch {
                    channel.close(promise: nil)
                    promise.fail(error)
                }
                return promise.futureResult.map { channel }
            }
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
