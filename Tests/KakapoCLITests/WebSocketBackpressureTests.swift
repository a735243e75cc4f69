import Foundation
import KakapoTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A replayed conversation keeps to the client's pace: a client that floods pings and never reads the
/// pongs is not read any further once its pongs cannot be written, so Kakapo's memory does not grow with
/// what it is sent (before, every ping was read and its pong queued).
@Suite("Command line: WebSocket backpressure")
struct WebSocketBackpressureTests {
    @Test("a client that floods pings without reading is stopped by its own full socket, and Kakapo answers others")
    func pingFlood() async throws {
        let directory = try Fixtures.temporaryDirectory()
        let cassette = directory + "/ws.json"
        try """
        {"version": 1, "interactions": [{"request": {"method": "GET", "url": "/chat", "headers": []},
          "response": {"status": 101, "headers": []},
          "websocket": {"messages": [{"from": "server", "offsetMs": 0, "text": "hi"},
                                     {"from": "client", "offsetMs": 1, "text": "never sent"}]}}]}
        """.write(toFile: cassette, atomically: true, encoding: .utf8)
        let kakapo = try KakapoProcess(["replay", "--cassette", cassette, "--port", "0"])
        let port = try await kakapo.waitUntilListening()

        let socket = try Self.connectAndUpgrade(port: port)
        defer { close(socket) }
        // Masked pings with 125 bytes of payload, sent without blocking for three seconds.
        var frame: [UInt8] = [0x89, 0x80 | 125, 1, 2, 3, 4]
        frame += [UInt8](repeating: 0x61, count: 125)
        var batch: [UInt8] = []
        for _ in 0..<512 { batch += frame }
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
        var sent = 0
        let until = ContinuousClock.now + .seconds(4)
        while ContinuousClock.now < until && sent < 256 << 20 {
            let written = batch.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written > 0 {
                sent += written
            } else {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        // What the kernel buffers on both sides and Kakapo's bounded write buffer hold: about 8 MiB. Reading
        // on without writing the pongs took 85 MiB in four seconds (a debug build).
        #expect(sent < 32 << 20, "Kakapo read \(sent >> 20) MiB of pings whose pongs it could not send")

        let client = try TestClient(port: port)
        let answer = try await client.send(.get, "/elsewhere")
        #expect(answer.status == 404)
        client.shutdown()
        kakapo.send(SIGINT)
        #expect(try await kakapo.waitForExit() == 0)
    }

    /// A blocking socket to `port` that has been upgraded to a WebSocket on `/chat`.
    static func connectAndUpgrade(port: Int) throws -> Int32 {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        // A small receive buffer: the pongs the client does not read back up into Kakapo at once.
        var small: Int32 = 4096
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw Failure("cannot connect to Kakapo") }
        let request =
            "GET /chat HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        _ = Array(request.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !head.suffix(4).elementsEqual([13, 10, 13, 10]), head.count < 4096, recv(fd, &byte, 1, 0) == 1 {
            head.append(byte)
        }
        guard String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
            throw Failure("no 101: \(String(decoding: head, as: UTF8.self))")
        }
        return fd
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
