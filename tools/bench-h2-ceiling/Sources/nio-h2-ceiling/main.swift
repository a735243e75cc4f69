import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix

/// A canned answer: its head and its body.
struct Canned: Sendable {
    let head: HTTPResponseHead
    let body: ByteBuffer

    init(body: ByteBuffer) {
        self.body = body
        self.head = HTTPResponseHead(
            version: .http2, status: .ok,
            headers: ["Content-Type": "application/json", "Content-Length": String(body.readableBytes)])
    }
}

/// Answers a request for /NAME with the file NAME's bytes as `application/json` (one dictionary lookup, as
/// Kakapo's replay has one), anything else with 404.
final class CannedHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let answers: [String: Canned]
    let notFound = HTTPResponseHead(version: .http2, status: .notFound, headers: ["Content-Length": "0"])
    var path = ""

    init(answers: [String: Canned]) {
        self.answers = answers
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            path = head.uri
        case .body:
            break
        case .end:
            if let answer = answers[path] {
                context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil)
            } else {
                context.write(wrapOutboundOut(.head(notFound)), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[1]), (0...65_535).contains(port) else {
    print("usage: nio-h2-ceiling PORT DIRECTORY   (serves each file of DIRECTORY at /NAME)")
    exit(2)
}
var answers: [String: Canned] = [:]
for name in try FileManager.default.contentsOfDirectory(atPath: arguments[2]) {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: arguments[2]).appendingPathComponent(name))
    answers["/" + name] = Canned(body: ByteBuffer(bytes: Array(bytes)))
}
let table = answers
let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
let server = try ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 256)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            // Kakapo's HTTP2Server settings: 100 streams, 1 MiB stream windows, 4 MiB for the connection.
            var connection = NIOHTTP2Handler.ConnectionConfiguration()
            connection.initialSettings = [
                HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
                HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                HTTP2Setting(parameter: .maxFrameSize, value: 1 << 14),
                HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 16),
                HTTP2Setting(parameter: .enablePush, value: 0),
            ]
            connection.targetWindowSize = 4 << 20
            var streams = NIOHTTP2Handler.StreamConfiguration()
            streams.targetWindowSize = 1 << 20
            _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                mode: .server, connectionConfiguration: connection, streamConfiguration: streams
            ) { stream in
                stream.eventLoop.makeCompletedFuture {
                    try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                    try stream.pipeline.syncOperations.addHandler(CannedHandler(answers: table))
                }
            }
        }
    }
    .bind(host: "127.0.0.1", port: port).wait()
// Written unbuffered: the banner is how bench-h2 learns the port, and stdout is a file there.
let banner = "nio-h2-ceiling listening on http://127.0.0.1:\(server.localAddress?.port ?? port)\n"
FileHandle.standardOutput.write(Data(banner.utf8))
try server.closeFuture.wait()
