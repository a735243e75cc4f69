import BenchServer
import Foundation
import NIOCore
import NIOHTTP1

/// Answers every request with `body` as `application/json`, keep-alive, pipelining assistance on.
final class CannedHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let head: HTTPResponseHead
    let body: ByteBuffer

    init(body: ByteBuffer) {
        self.body = body
        self.head = HTTPResponseHead(
            version: .http1_1, status: .ok,
            headers: ["Content-Type": "application/json", "Content-Length": String(body.readableBytes)])
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[1]) else {
    print("usage: nio-ceiling PORT BODY-FILE")
    exit(2)
}
let bytes = try String(contentsOfFile: arguments[2], encoding: .utf8)
let body = ByteBuffer(string: bytes)
try serveHTTP(port: port, banner: "nio-ceiling listening on 127.0.0.1:\(port)") { CannedHandler(body: body) }
