import Foundation
import Kakapo
import KakapoTestSupport

/// A client of `GET /__kakapo/events` over a plain socket, as a script would read it: it sends the request,
/// then reads server-sent events as they come (parsing only what is new each time), or reads nothing at all
/// for as long as a test wants (a stalled reader).
final class EventStreamReader {
    /// One server-sent event, or a comment (`name` ":", the text in `comment`).
    struct Event {
        var name = "message"
        var id: Int?
        var data: JSONValue?
        var comment: String?
    }

    let connection: RawConnection
    private(set) var bytes: [UInt8] = []
    private(set) var events: [Event] = []
    private(set) var closed = false
    private var parsed = 0
    private var headEnd: Int?

    /// Connects and asks for `target` with `headers` (lines such as `Last-Event-ID: 4`).
    init(port: Int, target: String = "/__kakapo/events", headers: [String] = []) throws {
        connection = try RawConnection(port: port, timeout: 0.5)
        let extra = headers.map { $0 + "\r\n" }.joined()
        connection.send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(extra)\r\n")
    }

    /// The response's head, once read.
    var head: String? { headEnd.map { String(decoding: bytes[..<$0], as: UTF8.self) } }

    /// The request events' JSON objects so far.
    var requests: [JSONValue] { events.filter { $0.name == "request" }.compactMap(\.data) }

    /// Reads until `done` holds for the events so far, the stream closes, or `timeout` passes; returns
    /// whether `done` held.
    @discardableResult
    func read(timeout: Duration = .seconds(5), until done: (EventStreamReader) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !done(self) {
            if closed || ContinuousClock.now >= deadline { return false }
            let (text, closedNow) = connection.receive { _ in true }
            bytes += Array(text.utf8)
            closed = closedNow
            parse()
        }
        return true
    }

    /// Reads the response's head (and whatever came with it).
    func readHead(timeout: Duration = .seconds(5)) -> String? {
        read(timeout: timeout) { $0.headEnd != nil }
        return head
    }

    private func parse() {
        if headEnd == nil {
            guard let range = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
            headEnd = range.upperBound
            parsed = range.upperBound
        }
        // Up to the last blank line: the events that arrived whole (chunk framing lines are skipped).
        var end = bytes.count
        while end - 1 > parsed && !(bytes[end - 1] == 10 && bytes[end - 2] == 10) { end -= 1 }
        guard end - 1 > parsed else { return }
        let piece = bytes[parsed..<end]
        parsed = end
        var current = Event()
        // Split on the bytes: as characters, "\r\n" (the chunk framing) is one, not a line end.
        for raw in piece.split(separator: 10, omittingEmptySubsequences: false) {
            let text = String(decoding: raw, as: UTF8.self)
            let line = text.hasSuffix("\r") ? text.dropLast() : text[...]
            if line.hasPrefix(":") {
                events.append(Event(name: ":", comment: String(line.dropFirst())))
            } else if line.hasPrefix("event: ") {
                current.name = String(line.dropFirst(7))
            } else if line.hasPrefix("id: ") {
                current.id = Int(line.dropFirst(4))
            } else if line.hasPrefix("data: ") {
                current.data = try? JSONParser.parse(Array(line.dropFirst(6).utf8))
                events.append(current)
                current = Event()
            }
        }
    }
}
