import Foundation
import KakapoCassette
import KakapoGRPC
import KakapoHTTP
import KakapoJSON
import Testing

/// A gRPC call in the cassette: `"grpc"` entries in place of bodies, read back as the same bytes; JSON
/// entries with a descriptor set; what is refused and how it is named.
@Suite("gRPC calls in cassettes")
struct GRPCCassetteTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func schema() throws -> GRPCSchema {
        try GRPCSchema(contentsOfFile: fixtures.appendingPathComponent("demo.desc").path)
    }

    /// `HelloRequest{name, times}` encoded by hand: field 1 (string), field 2 (varint).
    static func helloRequest(_ name: String, times: UInt8 = 0) -> [UInt8] {
        var bytes: [UInt8] = [0x0A, UInt8(name.utf8.count)] + Array(name.utf8)
        if times > 0 { bytes += [0x10, times] }
        return bytes
    }

    /// `HelloReply{message, sequence}`.
    static func helloReply(_ message: String, sequence: UInt8) -> [UInt8] {
        [0x0A, UInt8(message.utf8.count)] + Array(message.utf8) + [0x10, sequence]
    }

    static func call(streamed: Bool, path: String = "/demo.Greeter/StreamHellos") -> Interaction {
        let replies = (1...3).map { GRPCMessage(bytes: helloReply("hello \($0)", sequence: UInt8($0))) }
        let body = replies.framed
        // Pieces as they came: the first message alone, then the second and half the third, then the rest.
        let cut1 = replies[0].framed.count
        let cut2 = cut1 + replies[1].framed.count + 4
        let chunks = [
            ResponseChunk(offsetMilliseconds: 0, bytes: Array(body[0..<cut1])),
            ResponseChunk(offsetMilliseconds: 50, bytes: Array(body[cut1..<cut2])),
            ResponseChunk(offsetMilliseconds: 100.5, bytes: Array(body[cut2...])),
        ]
        return Interaction(
            request: HTTP.Request(
                method: .post, target: path,
                headers: ["content-type": "application/grpc", "te": "trailers"],
                body: [GRPCMessage(bytes: helloRequest("ada", times: 3))].framed),
            response: HTTP.Response(
                status: 200, headers: ["content-type": "application/grpc"], body: body,
                trailers: ["grpc-status": "0", "x-trace": "abc"], version: "2"),
            recordedAt: "2026-11-24T14:00:00.000Z", durationMilliseconds: 120,
            chunks: streamed ? chunks : nil)
    }

    static func text(_ interaction: Interaction, schema: GRPCSchema? = nil) -> String {
        String(decoding: CassetteCodec.encodeFile(Cassette(interactions: [interaction]), schema: schema), as: UTF8.self)
    }

    @Test("a streamed call is written as messages with the offset of the piece each one's last byte came in")
    func streamedRoundTrip() throws {
        let interaction = Self.call(streamed: true)
        let text = Self.text(interaction)
        #expect(text.contains("\"grpc\""), "\(text)")
        #expect(!text.contains("\"chunks\"") && !text.contains("\"body\""), "\(text)")
        #expect(text.contains("\"trailers\""))
        let file = try JSONParser.parse(Array(text.utf8))
        let messages = file.objectValue?["interactions"]?.arrayValue?.first?.objectValue?["response"]?.objectValue?[
            "grpc"]?.objectValue?["messages"]?.arrayValue
        let offsets = messages?.compactMap { $0.objectValue?["offsetMs"]?.numberValue?.literal }
        // The third message began in the second piece and ended in the third.
        #expect(offsets == ["0", "50", "100.5"])
        let read = try CassetteFile.decode(Array(text.utf8), file: "call.json").interactions[0]
        #expect(read.request == interaction.request)
        #expect(read.response == interaction.response)
        // One chunk per message in memory, so --stream-timing plays them one by one.
        #expect(read.chunks?.count == 3)
        #expect(read.chunks?.map(\.offsetMilliseconds) == [0, 50, 100.5])
        #expect(read.chunks?.joinedBytes == interaction.response.body)
    }

    @Test("a whole answer is written without offsets and read back as a body")
    func wholeRoundTrip() throws {
        let interaction = Self.call(streamed: false)
        let text = Self.text(interaction)
        #expect(!text.contains("offsetMs"), "\(text)")
        let read = try CassetteFile.decode(Array(text.utf8), file: "call.json").interactions[0]
        #expect(read == interaction)
    }

    @Test("a Trailers-Only answer (status among the headers) is written with its status in the trailers")
    func trailersOnly() throws {
        var interaction = Self.call(streamed: false)
        interaction.response = HTTP.Response(
            status: 200, headers: ["content-type": "application/grpc", "grpc-status": "5", "grpc-message": "gone"])
        let read = try CassetteFile.decode(Array(Self.text(interaction).utf8), file: "c.json").interactions[0]
        #expect(read.response.headers["grpc-status"] == nil)
        #expect(read.response.trailers["grpc-status"] == "5")
        #expect(read.response.trailers["grpc-message"] == "gone")
    }

    @Test("a body that is not whole frames is written as an ordinary body, byte for byte")
    func brokenFramesStayBodies() throws {
        var interaction = Self.call(streamed: false)
        interaction.request.body = [0, 0, 0, 0, 9, 1]
        let text = Self.text(interaction)
        #expect(text.contains("\"body\""))
        #expect(try CassetteFile.decode(Array(text.utf8), file: "c.json").interactions[0] == interaction)
    }

    static func cassette(request: String, response: String = #"{"status": 200}"#) -> [UInt8] {
        Array(
            (#"{"version": 1, "interactions": [{"request": {"method": "POST", "url": "/demo.Greeter/SayHello", "headers": [["content-type", "application/grpc"]], "grpc": "#
                + request + "}, \"response\": " + response + "}]}").utf8)
    }

    @Test("bad entries are refused with the path to them: bad base64, JSON without a schema, body beside grpc")
    func refusals() {
        let cases: [([UInt8], String)] = [
            (Self.cassette(request: #"{"messages": [{"base64": "!!"}]}"#), "\"base64\" is not valid base64"),
            (
                Self.cassette(request: #"{"messages": [{"json": {"name": "ada"}}]}"#),
                "run with --proto-descriptor FILE"
            ),
            (Self.cassette(request: #"{"messages": [{}]}"#), "a message needs \"base64\""),
            (Self.cassette(request: #"{"messages": [{"base64": "", "json": {}}]}"#), "not both"),
            (Self.cassette(request: #"{"frames": []}"#), "\"grpc\" holds \"messages\" only"),
            (
                Self.cassette(
                    request: #"{"messages": []}"#,
                    response: #"{"status": 200, "grpc": {"messages": [{"offsetMs": 5, "base64": ""}, {"base64": ""}]}}"#
                ),
                "either every message"
            ),
            (
                Self.cassette(
                    request: #"{"messages": []}"#,
                    response:
                        #"{"status": 200, "grpc": {"messages": [{"offsetMs": 50, "base64": ""}, {"offsetMs": 10, "base64": ""}]}}"#
                ),
                "no earlier than the message before"
            ),
            (
                Self.cassette(
                    request: #"{"messages": []}"#, response: #"{"status": 200, "body": {"text": "x"}, "grpc": {}}"#),
                "not beside them"
            ),
        ]
        for (bytes, expected) in cases {
            #expect {
                _ = try CassetteFile.decode(bytes, file: "bad.json")
            } throws: { error in
                let text = "\(error)"
                return text.contains("bad.json") && text.contains(expected) && text.contains("/interactions/0/")
            }
        }
    }

    @Test("with a descriptor set, messages are written as JSON and read back as the same bytes")
    func jsonRoundTrip() throws {
        let schema = try Self.schema()
        let interaction = Self.call(streamed: true)
        let text = Self.text(interaction, schema: schema)
        #expect(text.contains("\"name\": \"ada\""), "\(text)")
        #expect(text.contains("\"message\": \"hello 2\""), "\(text)")
        #expect(!text.contains("base64"), "\(text)")
        let read = try CassetteFile.decode(Array(text.utf8), file: "c.json", schema: schema).interactions[0]
        #expect(read.request.body == interaction.request.body)
        #expect(read.response.body == interaction.response.body)
        // Without the descriptor set the file cannot be read, and says why.
        #expect(throws: CassetteError.self) { try CassetteFile.decode(Array(text.utf8), file: "c.json") }
    }

    @Test("an edited JSON message is replayed as the bytes of the edit")
    func editedJSON() throws {
        let schema = try Self.schema()
        let bytes = Self.cassette(
            request: #"{"messages": [{"json": {"name": "grace", "times": 2}}]}"#,
            response:
                #"{"status": 200, "headers": [["content-type", "application/grpc"]], "trailers": [["grpc-status", "0"]], "grpc": {"messages": [{"json": {"message": "edited", "sequence": "7"}}]}}"#
        )
        let read = try CassetteFile.decode(bytes, file: "c.json", schema: schema).interactions[0]
        #expect(read.request.body == [GRPCMessage(bytes: Self.helloRequest("grace", times: 2))].framed)
        #expect(read.response.body == [GRPCMessage(bytes: Self.helloReply("edited", sequence: 7))].framed)
    }

    @Test("a compressed message or one the schema cannot give back exactly stays base64")
    func fallsBackToBase64() throws {
        let schema = try Self.schema()
        var interaction = Self.call(streamed: false)
        // Field 1 written twice: valid protobuf (the last wins), but its JSON gives back other bytes.
        let doubled = [0x0A, 0x01, 0x61] + Self.helloRequest("ada")
        interaction.request.body = [GRPCMessage(bytes: doubled), GRPCMessage(compressed: true, bytes: [1, 2])].framed
        let text = Self.text(interaction, schema: schema)
        #expect(text.contains("\"compressed\": true"), "\(text)")
        let read = try CassetteFile.decode(Array(text.utf8), file: "c.json", schema: schema).interactions[0]
        #expect(read.request.body == interaction.request.body)
    }

    @Test("with a descriptor set, a request matches a recording with the same JSON however its bytes are encoded")
    func matchingAsJSON() throws {
        let schema = try Self.schema()
        var matching = MatchOptions(ignoredBodyFields: [JSONPointer("/times")!])
        matching.grpcSchema = schema
        let recorded = Self.call(streamed: false)
        let cassette = Cassette(interactions: [recorded])
        var index = InteractionIndex(matching: matching)
        index.insert(recorded, at: 0)
        var live = recorded.request
        // The same name, written with a redundant first value, and another `times` (ignored).
        live.body = [GRPCMessage(bytes: [0x0A, 0x01, 0x62] + Self.helloRequest("ada", times: 9))].framed
        #expect(index.play(live) == 0)
        var other = recorded.request
        other.body = [GRPCMessage(bytes: Self.helloRequest("bob"))].framed
        #expect(index.play(other) == nil)
        let report = MissReport(request: other, cassette: cassette, redactor: Redactor(), matching: matching)
        #expect(report.nearest.first?.differences == ["gRPC message 1 field /name differs"])
        // Without the schema, bytes are compared.
        var bytesIndex = InteractionIndex()
        bytesIndex.insert(recorded, at: 0)
        #expect(bytesIndex.play(live) == nil)
    }
}
