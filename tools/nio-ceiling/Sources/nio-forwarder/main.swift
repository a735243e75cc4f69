import BenchServer
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

// The ceiling of forwarding on the NIO stack: a bare HTTP/1.1 forwarder where each client connection
// gets its own keep-alive connection to the upstream, opened on the same event loop (nginx's model: no
// thread hop, no wake-ups). It forwards GET and HEAD requests without bodies; nothing is recorded.
// tools/bench-forwarder runs it in the peers harness's S3, next to nginx proxy_pass.

/// On a client connection: sends each request upstream and writes the upstream's answer back.
final class ClientSideHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let upstreamHost: String
    let upstreamPort: Int
    let authority: String
    private var upstream: Channel?
    private var head: HTTPRequestHead?

    init(host: String, port: Int) {
        (upstreamHost, upstreamPort) = (host, port)
        authority = "\(host):\(port)"
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(var head):
            head.headers.replaceOrAdd(name: "Host", value: authority)
            head.headers.remove(name: "Connection")
            self.head = head
        case .body:
            break
        case .end:
            guard let head else { return }
            self.head = nil
            if let upstream {
                send(head, on: upstream)
                return
            }
            let client = context.channel
            let bootstrap = ClientBootstrap(group: context.eventLoop)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(UpstreamSideHandler(client: client))
                    }
                }
            let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
            bootstrap.connect(host: upstreamHost, port: upstreamPort).assumeIsolated().whenComplete { result in
                switch result {
                case .success(let channel):
                    loopBound.value.upstream = channel
                    loopBound.value.send(head, on: channel)
                case .failure:
                    client.close(promise: nil)
                }
            }
        }
    }

    private func send(_ head: HTTPRequestHead, on upstream: Channel) {
        upstream.write(HTTPClientRequestPart.head(head), promise: nil)
        upstream.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        upstream?.close(promise: nil)
        context.fireChannelInactive()
    }
}

/// On an upstream connection: the answer's parts go to the client as they arrive.
final class UpstreamSideHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    let client: Channel

    init(client: Channel) { self.client = client }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(var head):
            head.headers.remove(name: "Connection")
            client.write(HTTPServerResponsePart.head(head), promise: nil)
        case .body(let bytes):
            client.write(HTTPServerResponsePart.body(.byteBuffer(bytes)), promise: nil)
        case .end:
            client.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        client.close(promise: nil)
        context.fireChannelInactive()
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[2]),
    let url = URLComponents(string: arguments[1]), let host = url.host, let upstreamPort = url.port
else {
    print("usage: nio-forwarder http://HOST:PORT PORT")
    exit(2)
}
try serveHTTP(port: port, banner: "nio-forwarder listening on 127.0.0.1:\(port), forwarding to \(host):\(upstreamPort)") {
    ClientSideHandler(host: host, port: upstreamPort)
}
