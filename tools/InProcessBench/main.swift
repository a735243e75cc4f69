// Sequential URLSession requests answered by Kakapo in process and by the same cassette through the
// socket server, in one run: `tools/bench-inprocess [COUNT] [CASSETTE] [PATH]`.
import Foundation
import Kakapo

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

let arguments = CommandLine.arguments
let count = arguments.count > 1 ? Int(arguments[1]) ?? 10_000 : 10_000
let cassette = arguments.count > 2 ? arguments[2] : "cassettes/demo.json"
let path = arguments.count > 3 ? arguments[3] : "/users/1"

/// Sends `count` GETs one after the other and returns requests per second; every answer must be 200.
func measure(_ session: URLSession, _ url: URL) async throws -> Double {
    for _ in 0..<200 { _ = try await session.data(from: url) }  // warm-up
    let clock = ContinuousClock()
    let elapsed = try await clock.measure {
        for _ in 0..<count {
            let (_, response) = try await session.data(from: url)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else {
                throw CassetteTestFailure(description: "\(url) did not answer 200")
            }
        }
    }
    return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

struct CassetteTestFailure: Error, CustomStringConvertible { let description: String }

let inProcess = try InProcessKakapo(cassette: cassette)
let inProcessRate = try await measure(
    URLSession(configuration: inProcess.sessionConfiguration()), URL(string: "http://api.test" + path)!)
await inProcess.shutdown()

var configuration = ProxyConfiguration(port: 0, mode: .replay, cassettePath: cassette)
configuration.threads = 1
let server = try ProxyServer(configuration: configuration)
let port = try await server.start()
let socketRate = try await measure(
    URLSession(configuration: .ephemeral), URL(string: "http://127.0.0.1:\(port)" + path)!)
await server.shutdown()

print("| \(count) sequential URLSession GETs of \(path) | req/s |")
print("|---|---|")
print("| in process (InProcessKakapo) | \(Int(inProcessRate.rounded())) |")
print("| socket server on 127.0.0.1 | \(Int(socketRate.rounded())) |")
print("in process is \(String(format: "%.1f", inProcessRate / socketRate))x the socket server")
