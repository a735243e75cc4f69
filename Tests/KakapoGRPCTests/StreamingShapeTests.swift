import Foundation
import KakapoJSON
import KakapoTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every gRPC call shape through the built `kakapo` with grpcio (Fixtures/shapes.proto, shapes_server.py,
/// shapes_client.py): a bidirectional call whose client keeps its request open while it waits (etcd's watch)
/// is answered UNIMPLEMENTED at once, with and without `--proto-descriptor`, through `kakapo record` and
/// `kakapo replay`, said in the log at the default level and journaled; unary, server-streaming and
/// client-streaming calls (and, without a descriptor set, a bidirectional call whose request ends at once)
/// still record and replay. Needs grpcio (tools/grpc.sh install); skipped without it unless `CI=true`.
@Suite("gRPC call shapes through kakapo", .serialized, .enabled(if: GRPCPeer.isAvailable))
struct StreamingShapeTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        .path
    static let python = GRPCPeer.python

    /// What the client saw of one call.
    struct Call: CustomStringConvertible {
        var code: String
        var details: String
        var replies: [String]
        var seconds: Double

        var description: String { "\(code) \(details.debugDescription) \(replies) in \(seconds) s" }
    }

    /// Python stubs and the descriptor set (`shapes.desc`) for shapes.proto, in a new folder.
    static func generate() async throws -> String {
        let directory = try Fixtures.temporaryDirectory()
        let result = try await KakapoProcess.run(
            [
                "-m", "grpc_tools.protoc", "-I", fixtures, "--python_out=\(directory)",
                "--grpc_python_out=\(directory)", "--include_imports",
                "--descriptor_set_out=\(directory)/shapes.desc", fixtures + "/shapes.proto",
            ], executable: python)
        try #require(result.status == 0, "protoc: \(result.error)")
        return directory
    }

    /// Makes one call (`Say`, `Repeat`, `Collect`, `Echo` or `EchoOpen`) with `texts` to `port`.
    static func call(_ name: String, _ texts: [String], port: Int, stubs: String) async throws -> Call {
        let result = try await KakapoProcess.run(
            [fixtures + "/shapes_client.py", stubs, "127.0.0.1:\(port)", name] + texts, executable: python)
        try #require(result.status == 0, "client: \(result.error)")
        let object = try JSONParser.parse(Array(result.output.utf8)).objectValue ?? [:]
        return Call(
            code: object["code"]?.stringValue ?? "?", details: object["details"]?.stringValue ?? "",
            replies: (object["replies"]?.arrayValue ?? []).compactMap(\.stringValue),
            seconds: (object["seconds"]?.numberValue).flatMap { Double($0.literal) } ?? -1)
    }

    /// A call that keeps its request open got UNIMPLEMENTED promptly, with a message naming the limitation
    /// and the method (the client's own deadline is 20 s: a hang shows as DEADLINE_EXCEEDED). The stream is
    /// then reset with NO_ERROR (HTTP2StreamAbort): the CANCEL it used to be reset with was sometimes read
    /// by grpcio before the status, as CANCELLED.
    static func expectRefused(_ call: Call, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(call.code == "UNIMPLEMENTED", "\(call)", sourceLocation: sourceLocation)
        #expect(call.details.contains("not recorded or replayed yet"), "\(call)", sourceLocation: sourceLocation)
        #expect(call.details.contains("POST /shapes.Shapes/Echo"), "\(call)", sourceLocation: sourceLocation)
        #expect(call.details.contains("docs/grpc.md"), "\(call)", sourceLocation: sourceLocation)
        #expect(call.replies.isEmpty, "\(call)", sourceLocation: sourceLocation)
        #expect(call.seconds < 15, "\(call)", sourceLocation: sourceLocation)
    }

    /// The log said it at the default level (a warning naming the method), and the summary counted it.
    static func expectLogged(_ log: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let line = log.split(separator: "\n").first { $0.contains("not recorded or replayed yet") }
        #expect(line?.contains(" warning kakapo:") == true, "\(log)", sourceLocation: sourceLocation)
        #expect(line?.contains("POST /shapes.Shapes/Echo") == true, "\(log)", sourceLocation: sourceLocation)
    }

    /// Records the shapes that work, and an open bidirectional call, through `kakapo record` with `flags`.
    static func record(cassette: String, stubs: String, flags: [String]) async throws -> (calls: [Call], log: String) {
        let server = try KakapoProcess([fixtures + "/shapes_server.py", stubs], executable: python)
        defer { server.send(SIGKILL) }
        let upstreamPort = try await server.waitUntilListening()
        let recorder = try KakapoProcess(
            ["record", "--cassette", cassette, "--upstream", "h2c://127.0.0.1:\(upstreamPort)", "--port", "0"] + flags)
        let port = try await recorder.waitUntilListening()
        var calls: [Call] = []
        calls.append(try await call("Say", ["ada"], port: port, stubs: stubs))
        calls.append(try await call("Repeat", ["ada"], port: port, stubs: stubs))
        calls.append(try await call("Collect", ["a", "b", "c"], port: port, stubs: stubs))
        calls.append(try await call("EchoOpen", ["watch"], port: port, stubs: stubs))
        calls.append(try await call("Echo", ["x", "y"], port: port, stubs: stubs))
        recorder.send(SIGINT)
        #expect(try await recorder.waitForExit() == 0, "\(recorder.standardError)")
        return (calls, recorder.standardError)
    }

    @Test(
        "an open bidirectional call is UNIMPLEMENTED at once through record and replay, with or without a descriptor set; other shapes still work",
        arguments: [false, true])
    func openBidirectionalCall(withDescriptor: Bool) async throws {
        let stubs = try await Self.generate()
        let cassette = stubs + "/shapes.json"
        let flags = withDescriptor ? ["--proto-descriptor", stubs + "/shapes.desc"] : []
        let (recorded, recordLog) = try await Self.record(cassette: cassette, stubs: stubs, flags: flags)
        try #require(recorded.count == 5)
        #expect(recorded[0].code == "OK" && recorded[0].replies == ["unary: ada"], "\(recorded[0])")
        #expect(recorded[1].code == "OK" && recorded[1].replies == ["ada #1", "ada #2", "ada #3"], "\(recorded[1])")
        // Client streaming: the request's messages arrive and end at once; it is one body of three messages.
        #expect(recorded[2].code == "OK" && recorded[2].replies == ["a+b+c"], "\(recorded[2])")
        Self.expectRefused(recorded[3])
        if withDescriptor {
            // The descriptor set says Echo is bidirectional: refused on its headers, even with its request ended.
            Self.expectRefused(recorded[4])
            #expect(recordLog.contains("bidirectional in"), "\(recordLog)")
        } else {
            // Without one, a bidirectional call whose request ends at once is one body of several messages.
            #expect(recorded[4].code == "OK" && recorded[4].replies == ["echo: x", "echo: y"], "\(recorded[4])")
        }
        Self.expectLogged(recordLog)
        // Journaled: the summary counts the refusal as Kakapo's own answer.
        let summary = recordLog.split(separator: "\n").first { $0.hasPrefix("kakapo: ") && $0.contains(" requests (") }
        #expect(summary?.contains(" error") == true, "\(recordLog)")
        let show = try await KakapoProcess.run(["cassette", "show", cassette] + flags)
        #expect(!show.output.contains("/shapes.Shapes/EchoOpen"))
        #expect(
            show.output.split(separator: "\n").filter { $0.contains("/shapes.Shapes/Echo") }.count
                == (withDescriptor ? 0 : 1), "\(show.output)")

        // The service is gone: replayed from the cassette.
        let replayer = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"] + flags)
        let port = try await replayer.waitUntilListening()
        let say = try await Self.call("Say", ["ada"], port: port, stubs: stubs)
        let repeated = try await Self.call("Repeat", ["ada"], port: port, stubs: stubs)
        let collect = try await Self.call("Collect", ["a", "b", "c"], port: port, stubs: stubs)
        let open = try await Self.call("EchoOpen", ["watch"], port: port, stubs: stubs)
        let closed = try await Self.call("Echo", ["x", "y"], port: port, stubs: stubs)
        replayer.send(SIGINT)
        _ = try await replayer.waitForExit()
        #expect(say.replies == ["unary: ada"], "\(say)")
        #expect(repeated.replies == ["ada #1", "ada #2", "ada #3"], "\(repeated)")
        #expect(collect.replies == ["a+b+c"], "\(collect)")
        Self.expectRefused(open)
        if withDescriptor {
            Self.expectRefused(closed)
        } else {
            #expect(closed.code == "OK" && closed.replies == ["echo: x", "echo: y"], "\(closed)")
        }
        Self.expectLogged(replayer.standardError)
    }
}
