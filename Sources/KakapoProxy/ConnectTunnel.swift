import KakapoEngine
import KakapoHTTP
import NIOCore
import NIOHTTP1

/// Answers `CONNECT host:port`: a decrypted tunnel for intercepted hosts (TLS terminated with a
/// certificate from Kakapo's CA, then new HTTP handlers whose requests are addressed to that host; a client
/// that speaks plaintext HTTP inside, such as a `ws://` WebSocket, gets the HTTP handlers alone), a
/// blind one for the rest (through the upstream proxy, when one applies to the host); 400 for a target that is not `host:port`, 403 for Kakapo's own address, 404
/// for an unknown cassette session, 405 when Kakapo is not a forward proxy, 502 for a host it cannot
/// reach. Errors are written below the HTTP encoder, which leaves out the body of any answer to a
/// `CONNECT`.
struct ConnectTunnel {
    let settings: HTTPConnectionSettings
    let timeouts: ConnectionTimeoutHandler?
    let errors: ErrorWriter

    private static let established = ByteBuffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n")

    /// Opens the tunnel `head` asks for on a connection whose requests go to `origin` (nil outside a
    /// tunnel: a tunnel does not nest). The connection reads no more HTTP from now on.
    func open(_ head: HTTPRequestHead, origin: String?, context: ChannelHandlerContext) {
        let pipeline = settings.pipeline
        let channel = context.channel
        guard let forward = settings.forward, origin == nil else {
            errors.writeBelowEncoder(
                "CONNECT is answered in forward-proxy mode only (--proxy)", status: .methodNotAllowed, channel: channel)
            return
        }
        guard let (host, port) = RequestOrigin.splitAuthority(head.uri), let port,
            let tunnelOrigin = RequestOrigin.make(scheme: port == 80 ? "http" : "https", host: host, port: port)
        else {
            pipeline.logger.info("refused a malformed CONNECT target \"\(head.uri)\"")
            errors.writeBelowEncoder(
                "malformed CONNECT target \"\(head.uri)\": expected host:port", status: .badRequest, channel: channel)
            return
        }
        let listening = ListeningAddress(
            configuredHost: pipeline.configuration.host, local: channel.localAddress, pipeline: pipeline)
        if listening.isSelf(host: host, port: port) {
            refuseTunnelToSelf(head.uri, channel: channel)
            return
        }
        // A CONNECT that names a cassette session (proxy credentials) gives it the whole decrypted tunnel.
        var session: String?
        if let sessions = pipeline.sessions {
            session = SessionRegistry.sessionID(
                in: HTTP.Headers(head.headers.map { HTTP.Headers.Field(name: $0.name, value: $0.value) }))
            if let id = session, !sessions.isOpen(id) {
                errors.writeBelowEncoder(SessionRegistry.unknown(id), status: .notFound, channel: channel)
                return
            }
        }
        if let interception = settings.tls.interception, forward.intercepts(host) {
            // TLS (https://, wss://) is decrypted; plaintext through the tunnel (ws://, or http:// a client
            // tunnels anyway) is read as it is. The client's first bytes tell which.
            let settings = self.settings
            let timeouts = self.timeouts
            let logger = pipeline.logger
            let sniffer = ConnectTunnelSniffer { tls, operations in
                do {
                    if tls { try operations.addHandler(try interception.makeServerHandler(forHost: host)) }
                    let origin = tls ? tunnelOrigin : RequestOrigin.make(scheme: "http", host: host, port: port)
                    try settings.addHTTPHandlers(to: operations, timeouts: timeouts, origin: origin, session: session)
                    logger.debug("CONNECT \(host):\(port): \(tls ? "decrypting" : "plaintext HTTP inside")")
                } catch {
                    logger.error("CONNECT \(host):\(port): cannot set up the tunnel: \(error)")
                    throw error
                }
            }
            do {
                let operations = channel.pipeline.syncOperations
                HTTPConnectionSettings.removeHTTPHandlers(from: operations)
                channel.writeAndFlush(Self.established, promise: nil)
                try operations.addHandler(sniffer)
            } catch {
                pipeline.logger.error("CONNECT \(host):\(port): cannot set up the tunnel: \(error)")
                channel.close(promise: nil)
            }
            return
        }
        if let session {
            pipeline.logger.warning(
                "CONNECT \(host):\(port) for session \(session): not intercepted (--intercept), so its tunnel is blind and nothing in it is recorded or replayed"
            )
        }
        openBlind(to: host, port: port, timeout: forward.tunnelConnectTimeout, listening: listening, channel: channel)
    }

    /// 403 for a `CONNECT` to Kakapo's own listening address: the tunnel's requests would reach Kakapo from
    /// loopback, as if they were its own (the admin API among them).
    private func refuseTunnelToSelf(_ target: String, channel: any Channel) {
        settings.pipeline.logger.warning("refused CONNECT \(target): it is Kakapo's own address")
        errors.writeBelowEncoder(
            "a tunnel through the proxy may not lead to Kakapo itself (\(target))", status: .forbidden,
            channel: channel)
    }

    /// Connects to `host:port`, answers 200 and from then on passes bytes both ways untouched; answers 502
    /// when the host cannot be reached.
    private func openBlind(
        to host: String, port: Int, timeout: Double, listening: ListeningAddress, channel: any Channel
    ) {
        let logger = settings.pipeline.logger
        let tunnel = NIOLoopBound(self, eventLoop: channel.eventLoop)
        // Through the upstream proxy that requests to this host take (CONNECT to port 80 is http's).
        let proxy = settings.pipeline.upstream?.proxies.proxy(scheme: port == 80 ? "http" : "https", host: host)
        let via = proxy.map { " through the upstream proxy \($0)" } ?? ""
        TunnelHandler.connect(
            to: host, port: port, timeout: timeout, through: proxy, tls: settings.tls.upstream, on: channel.eventLoop
        ).whenComplete { result in
            switch result {
            case .success(let upstream) where listening.isSelf(upstream.remoteAddress):
                // A name that resolved to this machine: known only once connected.
                upstream.close(promise: nil)
                tunnel.value.refuseTunnelToSelf("\(host):\(port)", channel: channel)
            case .success(let upstream):
                do {
                    try TunnelHandler.splice(channel, with: upstream) {
                        channel.writeAndFlush(Self.established, promise: nil)
                    }
                    logger.debug("CONNECT \(host):\(port): blind tunnel\(via)")
                } catch {
                    channel.close(promise: nil)
                    upstream.close(promise: nil)
                }
            case .failure(let error):
                logger.info("CONNECT \(host):\(port): cannot reach it\(via): \(error)")
                tunnel.value.errors.writeBelowEncoder(
                    "cannot open a tunnel to \(host):\(port): \(error)", status: .badGateway, channel: channel)
            }
        }
    }
}
