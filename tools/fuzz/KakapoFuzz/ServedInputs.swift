import Foundation
import KakapoEngine
import KakapoHTTP
import KakapoJSON
import KakapoProxy
import KakapoRoutesFile
import KakapoTestSupport

/// The entry points that need a server: one per process, replaying the demo cassette in front of a
/// route with templates and a Store resource, started on a free loopback port the first time.
enum ServedInputs {
    /// Starts the server and waits until it listens.
    static func prepare() { _ = port }

    /// Renders the input as a response template, in the body and in a header, for a request with a
    /// path parameter, a query and a JSON body.
    static func template(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let routes: JSONValue = [
            "routes": [
                [
                    "method": "POST", "path": "/t/:id",
                    "response": ["headers": ["X-Template": .string(text)], "text": .string(text)],
                ]
            ]
        ]
        let path = FileInputs.scratchFile("template.json")
        _ = FileManager.default.createFile(atPath: path, contents: Data(JSONWriter().write(routes)))
        guard let definition = try? RoutesFile.load(path), (try? server.pipeline.install(definition)) != nil else {
            return
        }
        _ = answer(
            HTTP.Request(
                method: "POST", target: "/t/42?q=%E2%9C%93&n=1", headers: ["Content-Type": "application/json"],
                body: Array(#"{"name":"Ada","tags":["a","b"],"n":1e3}"#.utf8)))
    }

    /// The input as the query of a list request to the `/todos` resource.
    static func query(_ bytes: [UInt8]) {
        let query = String(decoding: bytes, as: UTF8.self)
        _ = answer(HTTP.Request(method: "GET", target: "/todos?" + query))
    }

    /// The input as everything a client sends on one connection, which it then closes for writing;
    /// the server's answer is read to its end (or for at most two seconds).
    static func request(_ bytes: [UInt8]) {
        let connection = connect()
        connection.send(bytes: bytes)
        connection.finishSending()
        _ = connection.drain(upTo: Int.max)
    }

    private static func connect() -> RawConnection { FuzzServer.connect(port) }

    private static func answer(_ request: HTTP.Request) -> Answer { FuzzServer.answer(request, from: server) }

    private static let server: ProxyServer = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
        var configuration = ProxyConfiguration(
            port: 0, mode: .replay, cassettePath: root + "/cassettes/demo.json", idleTimeout: 5, requestReadTimeout: 5)
        configuration.threads = 1
        do {
            let server = try ProxyServer(configuration: configuration)
            let routes: JSONValue = [
                "routes": [["method": "GET", "path": "/hello/:name", "response": ["json": ["hi": "{{params.name}}"]]]],
                "resources": [
                    [
                        "path": "/todos",
                        "seed": [
                            ["id": 1, "title": "Record", "done": true, "tags": ["a"], "owner": ["name": "ada"]],
                            ["id": 2, "title": "Replay", "done": false, "n": 12.5],
                            ["id": "x", "title": nil],
                        ],
                    ]
                ],
            ]
            let path = FileInputs.scratchFile("server.routes.json")
            _ = FileManager.default.createFile(atPath: path, contents: Data(JSONWriter().write(routes)))
            try server.pipeline.install(try RoutesFile.load(path))
            return server
        } catch {
            fatalError("the fuzz server does not start: \(error)")
        }
    }()

    /// The server's port, once it listens.
    private static let port: Int = FuzzServer.start(server)
}
