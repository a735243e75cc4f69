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

    /// A connection to the server. A refusal may be passing (the client's ports all in TIME_WAIT after
    /// tens of thousands of inputs, or the server pausing its accepts while out of descriptors), so it is
    /// tried for two seconds; a server that accepts nothing for that long is the finding.
    private static func connect() -> RawConnection {
        var lastError = ""
        for _ in 0..<40 {
            do {
                return try RawConnection(port: port, timeout: 2)
            } catch {
                lastError = "\(error)"
                usleep(50_000)
            }
        }
        fatalError("the server accepted no connection for two seconds: \(lastError)")
    }

    /// The pipeline's answer to `request`, as a client on loopback gets it.
    private static func answer(_ request: HTTP.Request) -> Answer {
        let done = DispatchSemaphore(value: 0)
        let box = AnswerBox()
        server.pipeline.handle(request, fromLoopback: true) { answer in
            box.answer = answer
            done.signal()
        }
        done.wait()
        return box.answer!
    }

    private static let server: ProxyServer = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
        var configuration = ProxyConfiguration(
            port: 0, mode: .none, cassettePath: root + "/cassettes/demo.json", idleTimeout: 5, requestReadTimeout: 5)
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
    private static let port: Int = {
        let done = DispatchSemaphore(value: 0)
        let box = PortBox()
        Task.detached {
            box.port = try? await server.start()
            done.signal()
        }
        done.wait()
        guard let port = box.port else { fatalError("the fuzz server does not listen") }
        return port
    }()
}

/// Hands a value from a callback to the thread waiting on a semaphore (the semaphore orders the accesses).
private final class AnswerBox: @unchecked Sendable {
    var answer: Answer?
}

/// Hands the bound port from the starting task to the waiting thread (the semaphore orders the accesses).
private final class PortBox: @unchecked Sendable {
    var port: Int?
}
