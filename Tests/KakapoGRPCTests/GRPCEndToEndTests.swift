import Foundation
import KakapoJSON
import KakapoTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A grpcio service (Fixtures/demo_server.py) recorded through the built `kakapo` over h2c, then replayed with
/// the service gone, to a grpcio client (Fixtures/demo_client.py): unary, server-streaming and failing calls,
/// a miss, and JSON messages with a descriptor set. Needs grpcio in the test venv (tools/grpc.sh install);
/// skipped without it, except under CI (`CI=true`), where it fails instead.
@Suite("gRPC through kakapo with grpcio", .serialized, .enabled(if: GRPCPeer.isAvailable))
struct GRPCEndToEndTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        .path
    static let python = GRPCPeer.python

    /// What the client saw of one call.
    struct Call: Equatable, CustomStringConvertible {
        var code: String
        var details: String
        var replies: [String]
        var trailing: [[String]]
        var arrivals: [Double]

        /// Equal but for timing.
        func sameAnswer(as other: Call) -> Bool {
            code == other.code && details == other.details && replies == other.replies && trailing == other.trailing
        }

        var description: String { "\(code) \(details.debugDescription) \(replies) \(trailing)" }
    }

    /// Python stubs and the descriptor set (`demo.desc`) for demo.proto, in a new folder.
    static func generate() async throws -> String {
        let directory = try Fixtures.temporaryDirectory()
        let result = try await KakapoProcess.run(
            [
                "-m", "grpc_tools.protoc", "-I", fixtures, "--python_out=\(directory)",
                "--grpc_python_out=\(directory)", "--include_imports", "--descriptor_set_out=\(directory)/demo.desc",
                fixtures + "/demo.proto",
            ], executable: python)
        try #require(result.status == 0, "protoc: \(result.error)")
        return directory
    }

    /// Runs the client against `port` and returns what it saw of each call.
    static func run(_ calls: String, port: Int, stubs: String) async throws -> [Call] {
        let result = try await KakapoProcess.run(
            [fixtures + "/demo_client.py", stubs, "127.0.0.1:\(port)", calls], executable: python)
        try #require(result.status == 0, "client: \(result.error)")
        let json = try JSONParser.parse(Array(result.output.utf8))
        let list = try #require(json.objectValue?["calls"]?.arrayValue, "\(result.output)")
        return list.map { entry in
            let object = entry.objectValue ?? [:]
            return Call(
                code: object["code"]?.stringValue ?? "?", details: object["details"]?.stringValue ?? "",
                replies: (object["replies"]?.arrayValue ?? []).map { reply in
                    let message = reply.objectValue?["message"]?.stringValue ?? ""
                    let sequence = reply.objectValue?["sequence"]?.numberValue?.literal ?? "0"
                    return "\(message)/\(sequence)"
                },
                trailing: (object["trailing"]?.arrayValue ?? []).map {
                    ($0.arrayValue ?? []).compactMap(\.stringValue)
                },
                arrivals: (object["arrivals"]?.arrayValue ?? []).compactMap {
                    $0.numberValue.flatMap { Double($0.literal) }
                })
        }
    }

    static let recordedCalls = """
        [{"method": "SayHello", "name": "ada"}, {"method": "StreamHellos", "name": "ada", "times": 5},
         {"method": "Fail", "name": "missing-ada"}, {"method": "Fail", "name": "bob"}]
        """

    /// Starts the Python service and records `recordedCalls` through `kakapo record` (with `flags`) into
    /// `cassette`; returns what the client saw. The service is stopped before this returns.
    static func record(into cassette: String, stubs: String, flags: [String] = []) async throws -> [Call] {
        let server = try KakapoProcess([fixtures + "/demo_server.py", stubs], executable: python)
        defer { server.send(SIGKILL) }
        let upstreamPort = try await server.waitUntilListening()
        let recorder = try KakapoProcess(
            ["record", "--cassette", cassette, "--upstream", "h2c://127.0.0.1:\(upstreamPort)", "--port", "0"] + flags)
        let port = try await recorder.waitUntilListening()
        let calls = try await run(recordedCalls, port: port, stubs: stubs)
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0, "\(recorder.standardError)")
        return calls
    }

    @Test(
        "unary, streaming and failing calls replay with their messages, statuses and trailing metadata; a miss is NOT_FOUND"
    )
    func recordAndReplay() async throws {
        let stubs = try await Self.generate()
        let cassette = stubs + "/grpc.json"
        let recorded = try await Self.record(into: cassette, stubs: stubs)
        // What the service itself answers, through Kakapo while recording.
        try #require(recorded.count == 4)
        #expect(recorded[0].replies == ["hello ada/1"])
        #expect(recorded[0].trailing == [["x-served-by", "python"]])
        #expect(recorded[1].replies == (1...5).map { "hello ada #\($0)/\($0)" })
        #expect(recorded[1].trailing == [["x-stream-count", "5"]])
        #expect(recorded[2].code == "NOT_FOUND" && recorded[2].details == "no user named missing-ada (é)")
        #expect(recorded[3].code == "INVALID_ARGUMENT" && recorded[3].details == "bad name: bob")

        let show = try await KakapoProcess.run(["cassette", "show", cassette])
        #expect(show.output.contains("grpc 1 -> 1 message, status 0 (OK)"), "\(show.output)")
        #expect(show.output.contains("grpc 1 -> 5 messages, status 0 (OK)"), "\(show.output)")
        #expect(show.output.contains("grpc 1 -> 0 messages, status 5 (NOT_FOUND)"), "\(show.output)")

        // The service is gone: the same calls are answered from the cassette.
        let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0", "--stream-timing", "none"])
        let port = try await replayer.waitUntilListening()
        let replayed = try await Self.run(Self.recordedCalls, port: port, stubs: stubs)
        try #require(replayed.count == 4)
        for (again, original) in zip(replayed, recorded) {
            #expect(again.sameAnswer(as: original), "replayed \(again), recorded \(original)")
        }
        let missed = try await Self.run(#"[{"method": "SayHello", "name": "zed"}]"#, port: port, stubs: stubs)
        #expect(missed.first?.code == "NOT_FOUND")
        // The miss line first (the method, the nearest recording and its first difference), then the report.
        let line = "/demo.Greeter/SayHello (gRPC): body: the bodies differ (interaction 0"
        #expect(missed.first?.details.hasPrefix("kakapo: no recording matches POST ") == true, "\(missed)")
        #expect(missed.first?.details.contains(line) == true, "\(missed)")
        #expect(missed.first?.details.contains("; mode none; nearest: interaction 0") == true, "\(missed)")
        let immediate = try await Self.run(
            #"[{"method": "StreamHellos", "name": "ada", "times": 5}]"#, port: port, stubs: stubs)
        replayer.send(SIGINT)
        _ = try await replayer.waitForExit()
        // The log at the default level and the summary say the same line.
        #expect(replayer.standardError.contains("miss: POST "), "\(replayer.standardError)")
        #expect(replayer.standardError.contains(line), "\(replayer.standardError)")

        // With the recorded timing, the five messages keep their gaps (about 50 ms each).
        let timed = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let timedPort = try await timed.waitUntilListening()
        let paced = try await Self.run(
            #"[{"method": "StreamHellos", "name": "ada", "times": 5}]"#, port: timedPort, stubs: stubs)
        timed.send(SIGINT)
        _ = try await timed.waitForExit()
        let spread = { (call: Call?) -> Double in (call?.arrivals.last ?? 0) - (call?.arrivals.first ?? 0) }
        #expect(paced.first?.replies == recorded[1].replies)
        #expect(spread(paced.first) >= 150, "recorded timing: \(paced.first?.arrivals ?? [])")
        #expect(spread(immediate.first) < spread(paced.first), "none: \(immediate.first?.arrivals ?? [])")
    }

    @Test("an upstream that cannot be reached is UNAVAILABLE to a gRPC client, with Kakapo's reason")
    func unreachableUpstream() async throws {
        let stubs = try await Self.generate()
        let closed = try ClosedPort()
        let recorder = try KakapoProcess([
            "record", "--cassette", stubs + "/gone.json", "--upstream", "h2c://127.0.0.1:\(closed.port)", "--port", "0",
        ])
        let port = try await recorder.waitUntilListening()
        let calls = try await Self.run(#"[{"method": "SayHello", "name": "ada"}]"#, port: port, stubs: stubs)
        recorder.send(SIGINT)
        _ = try await recorder.waitForExit()
        #expect(calls.first?.code == "UNAVAILABLE", "\(calls)")
        #expect(calls.first?.details.contains("cannot connect to the upstream") == true, "\(calls)")
    }

    @Test(
        "with --proto-descriptor the cassette holds JSON messages: an edit is replayed, and other bytes of the same JSON match"
    )
    func descriptorSet() async throws {
        let stubs = try await Self.generate()
        let cassette = stubs + "/grpc-json.json"
        let descriptor = ["--proto-descriptor", stubs + "/demo.desc"]
        _ = try await Self.record(into: cassette, stubs: stubs, flags: descriptor)
        let show = try await KakapoProcess.run(["cassette", "show", cassette, "--messages"] + descriptor)
        #expect(show.output.contains(#"-> {"name":"ada","times":5}"#), "\(show.output)")
        #expect(show.output.contains(#"{"message":"hello ada #5","sequence":"5"}"#), "\(show.output)")
        var text = try String(contentsOfFile: cassette, encoding: .utf8)
        #expect(text.contains(#""name": "ada""#), "\(text)")
        #expect(text.contains(#""message": "hello ada #3""#), "\(text)")
        // Edited by hand: the unary answer's message.
        #expect(text.contains(#""message": "hello ada""#))
        text = text.replacingOccurrences(of: #""message": "hello ada""#, with: #""message": "edited by hand""#)
        try text.write(toFile: cassette, atomically: true, encoding: .utf8)

        let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"] + descriptor)
        let port = try await replayer.waitUntilListening()
        // `name` written twice ("b", then "ada"): other bytes, the same JSON.
        let reencoded = "0a01620a03616461"
        let calls = try await Self.run(
            #"[{"method": "SayHello", "name": "ada"}, {"method": "SayHello", "raw": "\#(reencoded)"}]"#, port: port,
            stubs: stubs)
        replayer.send(SIGINT)
        _ = try await replayer.waitForExit()
        #expect(calls.map(\.replies) == [["edited by hand/1"], ["edited by hand/1"]], "\(calls)")

        // Without the descriptor set the JSON cannot be turned into bytes: kakapo says so and exits 3.
        let refused = try await KakapoProcess.run(["replay", "--cassette", cassette, "--port", "0"])
        #expect(refused.status == 3)
        #expect(refused.error.contains("--proto-descriptor"), "\(refused.error)")
        let missing = try await KakapoProcess.run(
            ["replay", "--cassette", cassette, "--port", "0", "--proto-descriptor", stubs + "/nothing.desc"])
        #expect(missing.status == 3)
        #expect(missing.error.contains("nothing.desc"), "\(missing.error)")
    }
}

/// grpcio in the test venv (tools/grpc.sh install).
enum GRPCPeer {
    static let python = PythonWebSocketPeer.python
    /// Whether grpcio and grpcio-tools import. Under CI (`CI=true`, where tools/grpc.sh installs them) this is
    /// always true, so a missing install fails the tests instead of skipping them.
    static let isAvailable =
        ProcessInfo.processInfo.environment["CI"] == "true"
        || (try? KakapoProcess.runBlocking(["-c", "import grpc, grpc_tools.protoc"], executable: python)) == 0
}
