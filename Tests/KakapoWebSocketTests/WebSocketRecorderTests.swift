import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoTestSupport
import KakapoWebSocket
import Logging
import Synchronization
import Testing

/// The recorder fed the bytes a tap sees, into a real cassette session: the bounds and permessage-deflate
/// settings that the end-to-end tests cannot reach cheaply.
@Suite("WebSocket recorder")
struct WebSocketRecorderTests {
    /// The log lines a recorder wrote.
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
    }

    struct Capture: LogHandler {
        let lines: Lines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            lines.lines.withLock { $0.append("\(event.level) \(event.message)") }
        }
    }

    /// A recorder whose conversation is bounded by `limit` and one message by `maximumMessageBytes` (by
    /// default as large), into a fresh session, with what it logs.
    static func recorder(limit: Int, maximumMessageBytes: Int? = nil) throws -> (WebSocketRecorder, Saved, Lines) {
        let path = try Fixtures.temporaryDirectory() + "/ws.json"
        let session = CassetteSession(path: path, cassette: Cassette(), redactor: .disabled)
        let plan = WebSocketRecordingPlan(
            session: session, replacing: false, request: HTTP.Request(method: .get, target: "/chat"))
        let lines = Lines()
        let logger = Logger(label: "test") { _ in Capture(lines: lines) }
        return (
            WebSocketRecorder(
                plan: plan, limit: limit, maximumMessageBytes: maximumMessageBytes ?? limit, described: "GET /chat",
                logger: logger),
            Saved(session: session, path: path), lines
        )
    }

    /// The session and the file it saves to.
    struct Saved {
        let session: CassetteSession
        let path: String

        /// The conversation recorded, once the session closed and saved it.
        func conversation() throws -> KakapoCassette.WebSocketConversation? {
            try session.close()
            return try CassetteFile.load(path).interactions.first?.webSocket
        }
    }

    static func head(_ extensions: String? = nil) -> [UInt8] {
        var text = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        if let extensions { text += "Sec-WebSocket-Extensions: \(extensions)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    static func feed(_ recorder: WebSocketRecorder, _ bytes: [UInt8], from side: WebSocketMessage.Sender) {
        bytes.withUnsafeBytes { recorder.read($0, from: side) }
    }

    @Test("past the limit the conversation keeps the messages so far, warns once naming the limit, and is recorded")
    func conversationBound() throws {
        // Room for two 8-byte messages with their cost, not three.
        let limit = 2 * (WebSocketRecorder.messageCost + 8) + 4
        let (recorder, session, lines) = try Self.recorder(limit: limit)
        Self.feed(recorder, Self.head(), from: .server)
        for _ in 0..<4 {
            Self.feed(recorder, WebSocketFrameReaderTests.frame(1, Array("12345678".utf8)), from: .server)
        }
        Self.feed(recorder, WebSocketFrameReaderTests.frame(8, [0x03, 0xE8], mask: [1, 2, 3, 4]), from: .client)
        Self.feed(recorder, WebSocketFrameReaderTests.frame(8, [0x03, 0xE8]), from: .server)
        #expect(recorder.isEnded)
        let conversation = try #require(try session.conversation())
        #expect(conversation.messages.map(\.payload) == [.text("12345678"), .text("12345678")])
        #expect(conversation.close?.from == .client && conversation.close?.code == 1000)
        let warnings = lines.all.filter { $0.hasPrefix("warning") }
        #expect(warnings.count == 1, "\(lines.all)")
        #expect(
            warnings.first?.contains("the conversation is past \(limit) bytes (the maximum response size)") == true,
            "\(warnings)")
    }

    @Test(
        "a close whose code may not be sent (0, 999, 1005, 1006, 65535) is recorded without a code or reason, the conversation kept and the log saying so once"
    )
    func unsendableCloseCodes() throws {
        for code in [0, 999, 1005, 1006, 1015, 65535] {
            let (recorder, session, lines) = try Self.recorder(limit: 1 << 20)
            Self.feed(recorder, Self.head(), from: .server)
            Self.feed(recorder, WebSocketFrameReaderTests.frame(1, Array("hello".utf8)), from: .server)
            let close = [UInt8(code >> 8), UInt8(code & 0xFF)] + Array("gone".utf8)
            Self.feed(recorder, WebSocketFrameReaderTests.frame(8, close), from: .server)
            Self.feed(recorder, WebSocketFrameReaderTests.frame(8, [0x03, 0xE8], mask: [1, 2, 3, 4]), from: .client)
            #expect(recorder.isEnded)
            let conversation = try #require(try session.conversation(), "code \(code)")
            #expect(conversation.messages.map(\.payload) == [.text("hello")], "code \(code)")
            #expect(conversation.close?.from == .server && conversation.close?.code == nil, "code \(code)")
            #expect(conversation.close?.reason == "", "code \(code): a close without a code carries no reason")
            let said = lines.all
            #expect(said.filter { $0.contains("its code \(code) may not be sent") }.count == 1, "\(said)")
            #expect(!said.contains { $0.contains("not recorded") }, "\(said)")
        }
    }

    @Test("a close reason that is not UTF-8 is left out, the code and the conversation kept")
    func closeReasonNotUTF8() throws {
        let (recorder, session, lines) = try Self.recorder(limit: 1 << 20)
        Self.feed(recorder, Self.head(), from: .server)
        // 123 bytes that are not UTF-8 would grow to 369 as replacement characters, past what a frame holds.
        let close: [UInt8] = [0x0F, 0xA1] + Array(repeating: 0xFF, count: 123)
        Self.feed(recorder, WebSocketFrameReaderTests.frame(8, close), from: .server)
        Self.feed(recorder, WebSocketFrameReaderTests.frame(8, [0x03, 0xE8], mask: [1, 2, 3, 4]), from: .client)
        let conversation = try #require(try session.conversation())
        #expect(conversation.close?.code == 4001 && conversation.close?.reason == "")
        #expect(lines.all.contains { $0.contains("its 123-byte reason is not UTF-8") }, "\(lines.all)")
    }

    @Test(
        "a million empty frames are charged a cost each: the recording stops at the conversation's budget with one warning, the messages that fit kept"
    )
    func emptyFlood() throws {
        let limit = 16 << 20
        let (recorder, session, lines) = try Self.recorder(limit: limit)
        Self.feed(recorder, Self.head(), from: .server)
        // 1,000,000 empty text frames (2 bytes each) in 200 KB pieces, as TCP would deliver them.
        let piece = [UInt8]((0..<100_000).map { _ in [0x81, 0x00] }.joined())
        for _ in 0..<10 { Self.feed(recorder, piece, from: .server) }
        recorder.end(.connectionClosed)
        let conversation = try #require(try session.conversation())
        // Before a message had a cost, all 1,000,000 were kept (their bytes add up to nothing).
        #expect(conversation.messages.count == limit / WebSocketRecorder.messageCost)
        #expect(conversation.messages.allSatisfy { $0.payload == .text("") && $0.from == .server })
        let warnings = lines.all.filter { $0.hasPrefix("warning") }
        #expect(warnings.count == 1, "\(warnings)")
        #expect(
            warnings.first?.contains(
                "recording stopped after \(limit / WebSocketRecorder.messageCost) messages: the conversation is past 16 MiB (the maximum response size), counting \(WebSocketRecorder.messageCost) bytes a message"
            ) == true, "\(warnings)")
    }

    @Test("a message larger than --max-body-size stops the recording though the conversation's budget has room")
    func messageBound() throws {
        let (recorder, session, lines) = try Self.recorder(limit: 256 << 20, maximumMessageBytes: 1 << 20)
        Self.feed(recorder, Self.head(), from: .server)
        Self.feed(recorder, WebSocketFrameReaderTests.frame(2, [1, 2, 3]), from: .server)
        Self.feed(
            recorder, WebSocketFrameReaderTests.frame(2, [UInt8](repeating: 7, count: (1 << 20) + 1)), from: .server)
        Self.feed(recorder, WebSocketFrameReaderTests.frame(2, [4]), from: .server)
        recorder.end(.connectionClosed)
        let conversation = try #require(try session.conversation())
        #expect(conversation.messages.map(\.payload) == [.binary([1, 2, 3])])
        #expect(
            lines.all.contains { $0.contains("a server message is larger than --max-body-size (1 MiB)") },
            "\(lines.all)")
    }

    @Test(
        "client_no_context_takeover applies to the client's side only (the server's messages keep their context); invalid UTF-8 text is kept as binary"
    )
    func deflateSettings() throws {
        let (recorder, session, _) = try Self.recorder(limit: 1 << 20)
        Self.feed(recorder, Self.head("permessage-deflate; client_no_context_takeover"), from: .server)
        let hello = WebSocketInflaterTests.first
        for _ in 0..<2 {
            Self.feed(
                recorder, WebSocketFrameReaderTests.frame(1, hello, rsv1: true, mask: [9, 8, 7, 6]), from: .client)
        }
        Self.feed(recorder, WebSocketFrameReaderTests.frame(1, hello, rsv1: true), from: .server)
        Self.feed(
            recorder, WebSocketFrameReaderTests.frame(1, WebSocketInflaterTests.second, rsv1: true), from: .server)
        Self.feed(recorder, WebSocketFrameReaderTests.frame(1, [0xFF, 0xFE]), from: .server)
        recorder.end(.connectionClosed)
        let conversation = try #require(try session.conversation())
        #expect(
            conversation.messages.map(\.payload) == [
                .text("Hello"), .text("Hello"), .text("Hello"), .text("Hello"), .binary([0xFF, 0xFE]),
            ])
        #expect(conversation.messages.map(\.from) == [.client, .client, .server, .server, .server])
        #expect(conversation.close == nil)
    }

    @Test("a decompression bomb stops the recording at --max-body-size, not the conversation's larger budget")
    func bomb() throws {
        let (recorder, session, lines) = try Self.recorder(limit: 256 << 20, maximumMessageBytes: 1 << 20)
        Self.feed(recorder, Self.head("permessage-deflate"), from: .server)
        Self.feed(recorder, WebSocketFrameReaderTests.frame(1, Array("before".utf8)), from: .server)
        let bomb = WebSocketInflaterTests.deflated([UInt8](repeating: 0x61, count: 4 << 20))
        Self.feed(recorder, WebSocketFrameReaderTests.frame(1, bomb, rsv1: true), from: .server)
        Self.feed(recorder, WebSocketFrameReaderTests.frame(1, Array("after".utf8)), from: .server)
        recorder.end(.stopping)
        let conversation = try #require(try session.conversation())
        #expect(conversation.messages.map(\.payload) == [.text("before")])
        #expect(
            lines.all.contains { $0.contains("a server message inflates to more than --max-body-size (1 MiB)") },
            "\(lines.all)")
    }

    @Test("a compressed message that inflates past what is left of the conversation's budget stops the recording there")
    func bombPastBudget() throws {
        let (recorder, session, lines) = try Self.recorder(limit: 1 << 20, maximumMessageBytes: 64 << 20)
        Self.feed(recorder, Self.head("permessage-deflate"), from: .server)
        Self.feed(recorder, WebSocketFrameReaderTests.frame(1, Array("before".utf8)), from: .server)
        let bomb = WebSocketInflaterTests.deflated([UInt8](repeating: 0x61, count: 4 << 20))
        Self.feed(recorder, WebSocketFrameReaderTests.frame(1, bomb, rsv1: true), from: .server)
        recorder.end(.stopping)
        let conversation = try #require(try session.conversation())
        #expect(conversation.messages.map(\.payload) == [.text("before")])
        #expect(
            lines.all.contains { $0.contains("the conversation is past 1 MiB (the maximum response size)") },
            "\(lines.all)")
    }
}
