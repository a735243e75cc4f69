import Foundation
import KakapoTestSupport
import Testing

/// A route whose template renders what no header may hold answers 500, and says so in the log.
@Suite("Trust: a template fed CR/LF, from the command line")
struct TrustTemplateLogCLITests {
    @Test("CR/LF from the query in a header template: 500 with a JSON error, and a warning naming the route")
    func headerInjectionLogged() async throws {
        let routes = try Fixtures.temporaryDirectory() + "/routes.json"
        try
            #"{"routes": [{"method": "GET", "path": "/greet", "response": {"headers": {"X-Name": "{{query.name}}"}, "json": {}}}]}"#
            .write(toFile: routes, atomically: true, encoding: .utf8)
        let server = try KakapoProcess(["serve", "--routes", routes, "--port", "0"])
        let port = try await server.waitUntilListening()
        let result = try await KakapoProcess.run(
            [
                "--silent", "--max-time", "10", "--include",
                "http://127.0.0.1:\(port)/greet?name=a%0D%0ASet-Cookie:%20x=1",
            ],
            executable: "/usr/bin/curl")
        #expect(result.output.hasPrefix("HTTP/1.1 500"), "\(result.output)")
        #expect(!result.output.lowercased().contains("set-cookie"), "\(result.output)")
        server.send(SIGINT)
        #expect(try await server.waitForExit() == 0)
        #expect(server.standardError.contains("could not answer GET /greet"), "\(server.standardError)")
    }
}
