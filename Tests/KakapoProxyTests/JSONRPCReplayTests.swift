import KakapoHTTP
import KakapoJSON
import Testing

@testable import KakapoCassette
@testable import KakapoEngine

/// The cases of JSON-RPC replay that a real server rarely sends: events of several `data:` lines, ids
/// that cross recorded chunks, compressed bodies, hostile bodies; and the labels and redaction around them.
@Suite("JSON-RPC replay")
struct JSONRPCReplayTests {
    static func request(_ body: String, headers: HTTP.Headers = ["Content-Type": "application/json"]) -> HTTP.Request {
        HTTP.Request(method: .post, target: "/rpc", headers: headers, body: Array(body.utf8))
    }

    static let recorded = request(#"{"jsonrpc":"2.0","id":1,"method":"run"}"#)
    static let live = request(#"{"jsonrpc":"2.0","id":"live-1","method":"run"}"#)

    static func answer(_ headers: HTTP.Headers, _ body: Answer.Body) -> Answer {
        Answer(.response(status: 200, headers: headers, body: body), source: .cassette)
    }

    static func text(_ answer: Answer?) -> String {
        String(decoding: answer?.response?.body ?? [], as: UTF8.self)
    }

    @Test("an event whose JSON spans several data lines, and an id that crosses two recorded chunks")
    func eventsAndChunks() throws {
        // Recorded as id 12, cut between its two digits.
        let stream = "data: {\"jsonrpc\":\"2.0\",\ndata:  \"id\": 12,\ndata: \"result\": 5}\n\n"
        let split = try #require(stream.range(of: "\"id\": 1")).upperBound.utf16Offset(in: stream)
        let bytes = Array(stream.utf8)
        let chunks = [
            ResponseChunk(offsetMilliseconds: 0, bytes: Array(bytes[..<split])),
            ResponseChunk(offsetMilliseconds: 250, bytes: Array(bytes[split...])),
        ]
        let replayed = try #require(
            JSONRPCReplay.answer(
                Self.answer(["Content-Type": "text/event-stream"], .recorded(chunks)), to: Self.live,
                recorded: Self.request(#"{"jsonrpc":"2.0","id":12,"method":"run"}"#)))
        guard case .response(_, _, .recorded(let pieces)) = replayed.outcome else {
            Issue.record("not a recorded stream")
            return
        }
        #expect(pieces.map(\.offsetMilliseconds) == [0, 250])
        // The new id is written whole in the chunk where the old one began.
        #expect(String(decoding: pieces[1].bytes, as: UTF8.self).hasPrefix(",\ndata: "))
        #expect(
            String(decoding: pieces.joinedBytes, as: UTF8.self)
                == "data: {\"jsonrpc\":\"2.0\",\ndata:  \"id\": \"live-1\",\ndata: \"result\": 5}\n\n")
        #expect(replayed.replay == nil)
    }

    @Test("a gzip body is decoded, rewritten and encoded again, with its Content-Length")
    func gzipBody() throws {
        let plain = Array(#"{"jsonrpc": "2.0", "result": [1, 2], "id": 1}"#.utf8)
        let encoded = ContentCoding.gzip.encode(plain)
        let headers: HTTP.Headers = [
            "Content-Type": "application/json", "Content-Encoding": "gzip", "Content-Length": String(encoded.count),
        ]
        let replayed = try #require(
            JSONRPCReplay.answer(Self.answer(headers, .bytes(encoded)), to: Self.live, recorded: Self.recorded))
        let response = try #require(replayed.response)
        #expect(response.headers["Content-Length"] == String(response.body.count))
        #expect(
            ContentCoding.gzip.decode(response.body).map { String(decoding: $0, as: UTF8.self) }
                == #"{"jsonrpc": "2.0", "result": [1, 2], "id": "live-1"}"#)
    }

    @Test("the same ids, answers that are not JSON-RPC and broken or hostile bodies are left as recorded")
    func leftAlone() {
        let json: HTTP.Headers = ["Content-Type": "application/json"]
        let events: HTTP.Headers = ["Content-Type": "text/event-stream"]
        let bodies: [(HTTP.Headers, String)] = [
            (json, #"{"jsonrpc":"2.0","id":1,"result":"#),
            (json, #"{"id":1,"result":2}"#),
            (json, #"{"jsonrpc":"2.0","id":2,"result":2}"#),
            (json, String(repeating: "[", count: 100_000)),
            (events, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\ndata: {\"jsonrpc\"\n\n"),
            (events, "data:" + String(repeating: "\r", count: 10_000)),
        ]
        for (headers, body) in bodies {
            let answer = Self.answer(headers, .bytes(Array(body.utf8)))
            #expect(JSONRPCReplay.answer(answer, to: Self.live, recorded: Self.recorded) == nil, "\(body.prefix(60))")
        }
        let same = Self.answer(json, .bytes(Array(#"{"jsonrpc":"2.0","id":1,"result":2}"#.utf8)))
        #expect(JSONRPCReplay.answer(same, to: Self.recorded, recorded: Self.recorded) == nil)
        let rest = Self.request(#"{"name":"x","id":1}"#)
        #expect(JSONRPCReplay.answer(same, to: rest, recorded: rest) == nil)
    }

    @Test("a batch of 10,000 calls is rewritten in one pass")
    func largeBatch() throws {
        func batch(_ id: (Int) -> String) -> String {
            "[" + (0..<10_000).map { #"{"jsonrpc":"2.0","id":\#(id($0)),"method":"m"}"# }.joined(separator: ",") + "]"
        }
        let answers =
            "["
            + (0..<10_000).reversed().map { #"{"jsonrpc":"2.0","id":\#($0),"result":0}"# }
            .joined(separator: ",") + "]"
        let started = ContinuousClock.now
        let replayed = JSONRPCReplay.answer(
            Self.answer(["Content-Type": "application/json"], .bytes(Array(answers.utf8))),
            to: Self.request(batch { "\"s\($0)\"" }), recorded: Self.request(batch { "\($0)" }))
        #expect(ContinuousClock.now - started < .seconds(5))
        let text = Self.text(replayed)
        #expect(text.hasPrefix(#"[{"jsonrpc":"2.0","id":"s9999","result":0}"#))
        #expect(text.hasSuffix(#"{"jsonrpc":"2.0","id":"s0","result":0}]"#))
    }

    @Test("matching leaves ids out but keeps a notification apart from a request")
    func matching() throws {
        let call = try JSONParser.parse(#"{"jsonrpc":"2.0","id":7,"method":"m","params":[1]}"#)
        let other = try JSONParser.parse(#"{"jsonrpc":"2.0","id":"x","method":"m","params":[1]}"#)
        let notification = try JSONParser.parse(#"{"jsonrpc":"2.0","method":"m","params":[1]}"#)
        let plain = try JSONParser.parse(#"{"id":7,"method":"m"}"#)
        #expect(JSONRPCMessage.forMatching(call) == JSONRPCMessage.forMatching(other))
        #expect(JSONRPCMessage.forMatching(call) != JSONRPCMessage.forMatching(notification))
        #expect(JSONRPCMessage.forMatching(plain) == plain)
        let batch = try JSONParser.parse("[\(#"{"jsonrpc":"2.0","id":1,"method":"a"}"#), 3]")
        #expect(JSONRPCMessage.forMatching(batch) == batch)
    }

    @Test("labels name the method, a notification, or a batch's methods")
    func labels() {
        #expect(JSONRPCMessage.label(for: Self.recorded) == "jsonrpc run")
        #expect(
            JSONRPCMessage.label(for: Self.request(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#))
                == "jsonrpc notification notifications/initialized")
        #expect(
            JSONRPCMessage.label(
                for: Self.request(
                    #"[{"jsonrpc":"2.0","id":1,"method":"initialize"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#)
            )
                == "jsonrpc batch: initialize, tools/list")
        #expect(JSONRPCMessage.label(for: Self.request(#"{"query":"{ a }"}"#)) == nil)
        #expect(
            JSONRPCMessage.label(for: Self.request(#"{"jsonrpc":"2.0","id":1,"method":"a\u001b[2Jb"}"#))
                == "jsonrpc a?[2Jb")
    }

    @Test("Mcp-Session-Id is kept in a cassette; the credentials beside it are not")
    func sessionHeader() {
        var request = Self.recorded
        request.headers.add(name: "Mcp-Session-Id", value: "95f8d7c5e39e4b308aab13e616c31504")
        request.headers.add(name: "Authorization", value: "Bearer abc.def")
        let interaction = Interaction(
            request: request,
            response: HTTP.Response(status: 200, headers: ["Mcp-Session-Id": "95f8d7c5e39e4b308aab13e616c31504"]),
            recordedAt: "2026-11-24T05:00:00Z", durationMilliseconds: 1)
        let redacted = Redactor().redact(interaction).interaction
        #expect(redacted.request.headers["Mcp-Session-Id"] == "95f8d7c5e39e4b308aab13e616c31504")
        #expect(redacted.response.headers["Mcp-Session-Id"] == "95f8d7c5e39e4b308aab13e616c31504")
        #expect(redacted.request.headers["Authorization"] != "Bearer abc.def")
        #expect(Redactor().isSecretHeader("X-Session-Id"))
    }
}
