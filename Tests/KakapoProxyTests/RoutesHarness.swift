import Foundation
import Kakapo
import KakapoTestSupport

extension ProxyHarness {
    /// Writes `routes` (a routes file's text) into a fresh folder as `name`, plus `files` beside it, and
    /// starts a server that serves it in front of `configuration`'s cassette and upstream.
    static func serving(
        routes: String, name: String = "routes.json", files: [String: String] = [:],
        _ configuration: ProxyConfiguration = ProxyConfiguration()
    ) async throws -> ProxyHarness {
        let directory = try Fixtures.temporaryDirectory()
        for (file, text) in files {
            try text.write(toFile: directory + "/" + file, atomically: true, encoding: .utf8)
        }
        let path = directory + "/" + name
        try routes.write(toFile: path, atomically: true, encoding: .utf8)
        var configuration = configuration
        configuration.port = 0
        let server = try ProxyServer(configuration: configuration)
        try server.pipeline.install(try RoutesFile.load(path), directory: directory)
        let port = try await server.start()
        return ProxyHarness(server: server, client: try TestClient(port: port), port: port)
    }

    /// Sends a request with a JSON body.
    func send(_ method: HTTP.Method, _ target: String, json: String, headers: HTTP.Headers = [:]) async throws
        -> HTTP.Response
    {
        var headers = headers
        headers.add(name: "Content-Type", value: "application/json")
        return try await client.send(method, target, headers: headers, body: Array(json.utf8))
    }
}

/// Runs the curl command-line tool against a server and returns its exit status and error text.
enum Curl {
    static let path = "/usr/bin/curl"
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: path) }

    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String, error: String) {
        try await KakapoProcess.run(["--silent", "--show-error", "--max-time", "10"] + arguments, executable: path)
    }
}
