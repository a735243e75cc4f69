import NIOCore
import NIOHTTP1
import NIOPosix

/// Serves HTTP/1.1 on 127.0.0.1:`port` with one event loop per core and the server pipeline Kakapo uses
/// (pipelining assistance on, TCP_NODELAY), `handler()` making each connection's last handler; prints
/// `banner` once listening and returns when the server closes. The ceilings share it so they differ only
/// in what their handler does.
public func serveHTTP(
    port: Int, banner: String, handler: @escaping @Sendable () -> any ChannelHandler
) throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
    let channel = try ServerBootstrap(group: group)
        .serverChannelOption(.backlog, value: 256)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: true)
                try channel.pipeline.syncOperations.addHandler(handler())
            }
        }
        .bind(host: "127.0.0.1", port: port).wait()
    print(banner)
    try channel.closeFuture.wait()
}
