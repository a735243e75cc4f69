import Foundation
import KakapoCassette
import KakapoEngine
import KakapoGRPC
import KakapoGraphQL
import KakapoHTTP
import KakapoHTTP2
import KakapoJSON
import KakapoProxy
import KakapoTestSupport
import KakapoUpstream

/// The entry points of issue 49 for what landed in the rounds before it: WebSocket frames (replayed and
/// recorded), HTTP/2 frames on the listener, gRPC framing and protobuf without a descriptor set, GraphQL
/// documents, JSON-RPC bodies and the session API. They run against servers of their own: one replaying
/// `tools/fuzz/protocols.json` (a JSON-RPC call and batch, a GraphQL query, a gRPC call, a WebSocket
/// conversation) with HTTP/2 beside HTTP/1.1 and the sessions API on a scratch folder, and one recording
/// in front of it.
enum ProtocolInputs {
    /// Starts the servers and waits until they listen.
    static func prepare() { _ = (replayPort, recorderPort) }

    /// A GraphQL document: read as text, and sent as the query of a request the recording is matched with.
    static func graphQL(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        if let document = GraphQLDocument(text) {
            FileInputs.check(document.operations.count <= GraphQLDocument.operationLimit, "too many operations kept")
            FileInputs.check(document.operationCount >= document.operations.count, "operations miscounted")
        }
        let body = JSONWriter().write(["query": .string(text), "operationName": "User", "variables": ["id": "1"]])
        _ = answer(post("/graphql", body: body))
    }

    /// A body sent to the JSON-RPC endpoint: matched with the call and the batch (ids and MCP progress
    /// tokens left out), the answer given back with the live ids spliced in.
    static func jsonRPC(_ bytes: [UInt8]) {
        if let requests = JSONRPCMessage.requests(inBody: bytes) {
            FileInputs.check(!requests.isEmpty, "a JSON-RPC body with no request")
        }
        _ = answer(post("/rpc", body: bytes))
    }

    /// A gRPC body: split into its length-prefixed messages, matched with the recorded call, and redacted
    /// as recording an authentication call without a descriptor set does (every text field of every message).
    static func grpc(_ bytes: [UInt8]) {
        if let messages = try? GRPC.messages(in: bytes) {
            FileInputs.check(messages.framed == bytes, "gRPC messages did not frame back to their body")
        }
        _ = answer(post("/demo.Greeter/SayHello", body: bytes, contentType: "application/grpc"))
        let headers: HTTP.Headers = ["content-type": "application/grpc"]
        let interaction = Interaction(
            request: HTTP.Request(
                method: .post, target: "/etcdserverpb.Auth/Authenticate", headers: headers, body: bytes),
            response: HTTP.Response(status: 200, headers: headers, body: bytes), recordedAt: "",
            durationMilliseconds: 0)
        _ = BodyInputs.redactor.redact(interaction)
    }

    /// WebSocket frames a client sends after its upgrade: to the replayed conversation when the first byte
    /// is even, through the recorder (to the replayed one upstream) when it is odd.
    static func webSocket(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let connection = FuzzServer.connect(first.isMultiple(of: 2) ? replayPort : recorderPort)
        connection.send(
            "GET /chat HTTP/1.1\r\nHost: fuzz\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Sec-WebSocket-Protocol: chat\r\n\r\n")
        connection.send(bytes: Array(bytes.dropFirst()))
        connection.finishSending()
        _ = connection.drain(upTo: Int.max)
    }

    /// HTTP/2 frames after the connection preface, on the listener (h2c with prior knowledge).
    static func http2(_ bytes: [UInt8]) {
        let connection = FuzzServer.connect(replayPort)
        connection.send(bytes: Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + bytes)
        connection.finishSending()
        _ = connection.drain(upTo: Int.max)
    }

    /// A body sent to open a session; one that opens sends a request through it, then ends it.
    static func session(_ bytes: [UInt8]) {
        let opened = answer(post("/__kakapo/sessions", body: bytes))
        guard opened.status == 201, let body = opened.response?.body,
            case .string(let id)? = (try? JSONParser.parse(body))?["id"]
        else { return }
        FileInputs.check(id.utf8.count == 16, "a session id of \(id.utf8.count) characters")
        var request = post("/rpc", body: Array(#"{"jsonrpc":"2.0","id":2,"method":"sum","params":[1,2]}"#.utf8))
        request.headers.add(name: "X-Kakapo-Session", value: id)
        _ = answer(request)
        let ended = answer(HTTP.Request(method: .delete, target: "/__kakapo/sessions/" + id))
        FileInputs.check(ended.status == 200, "ending session \(id) answered \(ended.status)")
    }

    private static func post(_ target: String, body: [UInt8], contentType: String = "application/json")
        -> HTTP.Request
    {
        HTTP.Request(method: .post, target: target, headers: ["Content-Type": contentType], body: body)
    }

    /// The replaying server's answer to `request`, as a client on loopback gets it.
    private static func answer(_ request: HTTP.Request) -> Answer { FuzzServer.answer(request, from: replay) }

    private static let replay: ProxyServer = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path
        let folder = FileInputs.scratchFile("sessions")
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Sessions may replay it too.
        try? FileManager.default.removeItem(atPath: folder + "/protocols.json")
        try? FileManager.default.copyItem(atPath: root + "/protocols.json", toPath: folder + "/protocols.json")
        var configuration = ProxyConfiguration(
            port: 0, mode: .replay, cassettePath: root + "/protocols.json", idleTimeout: 5, requestReadTimeout: 5)
        configuration.threads = 1
        configuration.streamTiming = .none
        configuration.sessionDirectory = folder
        configuration.shutdownGracePeriod = 1
        do {
            return try ProxyServer(configuration: configuration, http2: HTTP2Server())
        } catch {
            fatalError("the fuzz replay server does not start: \(error)")
        }
    }()

    private static let replayPort: Int = FuzzServer.start(replay)

    /// Records what goes through it (the WebSocket conversations) from the replaying server.
    private static let recorder: ProxyServer = {
        var configuration = ProxyConfiguration(
            port: 0, mode: .all, cassettePath: FileInputs.scratchFile("recorded.json"),
            upstream: UpstreamConfiguration(baseURL: "http://127.0.0.1:\(replayPort)"), idleTimeout: 5,
            requestReadTimeout: 5)
        configuration.threads = 1
        do {
            return try ProxyServer(configuration: configuration)
        } catch {
            fatalError("the fuzz recording server does not start: \(error)")
        }
    }()

    private static let recorderPort: Int = FuzzServer.start(recorder)
}
