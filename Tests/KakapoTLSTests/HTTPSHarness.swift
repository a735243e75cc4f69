import Foundation
import KakapoTestSupport
import Testing

/// Every HTTPS test, one at a time: each starts several processes (kakapo, curl, python, openssl), and
/// running them side by side with the rest of the suite loaded a 2-core machine enough to upset the
/// timing tests elsewhere.
@Suite("HTTPS", .serialized) struct HTTPSTests {}

/// A real HTTPS upstream for the forward-proxy tests: the `kakapo` binary serving a routes file with
/// `--tls`, its certificate signed by a CA of its own (not the proxy's), in a folder of its own.
final class HTTPSUpstream: Sendable {
    let process: KakapoProcess
    let port: Int
    /// The upstream's CA certificate, what a client (or the proxy's `--upstream-ca`) must trust.
    let caCertificate: String

    static func start() async throws -> HTTPSUpstream {
        let directory = try Fixtures.temporaryDirectory()
        let routes = directory + "/upstream.routes.yaml"
        try """
        routes:
          - method: GET
            path: /hello/:name
            response:
              json: {hello: "{{params.name}}", host: "{{headers.host}}"}
          - method: POST
            path: /echo
            response:
              status: 201
              json: {got: "{{body.name}}"}
        """.write(toFile: routes, atomically: true, encoding: .utf8)
        let process = try KakapoProcess([
            "serve", "--routes", routes, "--tls", "--ca-dir", directory + "/upstream-ca", "--port", "0",
        ])
        let port = try await process.waitUntilListening()
        #expect(process.standardOutput.hasPrefix("kakapo listening on https://127.0.0.1:"))
        return HTTPSUpstream(process: process, port: port, caCertificate: directory + "/upstream-ca/kakapo-ca.pem")
    }

    private init(process: KakapoProcess, port: Int, caCertificate: String) {
        self.process = process
        self.port = port
        self.caCertificate = caCertificate
    }

    func stop() async throws {
        process.send(SIGTERM)
        _ = try await process.waitForExit()
    }
}

/// curl, the client most users try first: `--proxy`, `--cacert`, and the status line it got.
enum Curl {
    struct Result {
        let status: Int32
        let body: String
        let error: String
        /// The response status curl printed with `-w`, 0 when it got none.
        let httpStatus: Int
        /// The `X-Kakapo-Source` header of the final response, nil when there was none.
        let source: String?
    }

    static func run(_ arguments: [String]) async throws -> Result {
        let headers = try Fixtures.temporaryDirectory() + "/headers.txt"
        let result = try await KakapoProcess.run(
            ["-sS", "--max-time", "20", "-D", headers, "-w", "\n%{http_code}"] + arguments,
            executable: "/usr/bin/curl")
        var lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        let code = lines.popLast().flatMap { Int($0) } ?? 0
        let headerText = (try? String(contentsOfFile: headers, encoding: .utf8)) ?? ""
        let source = headerText.split(separator: "\r\n").last { $0.lowercased().hasPrefix("x-kakapo-source:") }
            .map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) }
        return Result(
            status: result.status, body: lines.joined(separator: "\n"), error: result.error, httpStatus: code,
            source: source)
    }
}
