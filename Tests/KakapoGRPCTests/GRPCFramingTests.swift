import KakapoGRPC
import KakapoHTTP
import Testing

/// Length-prefixed messages, statuses and `grpc-message` text (KakapoGRPC), hostile input included.
@Suite("gRPC framing, statuses and messages")
struct GRPCFramingTests {
    @Test("messages framed one after the other split back into the same messages, flags and all")
    func roundTrip() throws {
        let messages = [
            GRPCMessage(bytes: [0x0A, 0x03, 0x61, 0x64, 0x61]), GRPCMessage(bytes: []),
            GRPCMessage(compressed: true, bytes: Array(repeating: 7, count: 300)),
        ]
        let body = messages.framed
        #expect(body.count == 5 * 3 + 5 + 300)
        #expect(Array(body.prefix(5)) == [0, 0, 0, 0, 5])
        #expect(try GRPC.messages(in: body) == messages)
        #expect(try GRPC.messages(in: []) == [])
    }

    @Test("a cut prefix, a cut payload, a 4 GiB length and an unknown flag are errors that say where, never traps")
    func hostileBodies() {
        let cases: [([UInt8], String)] = [
            ([0, 0, 0], "cut short: its 5-byte prefix has 3"),
            ([0, 0, 0, 0, 4, 1, 2], "announces 4 bytes; 2 follow"),
            ([0, 0xFF, 0xFF, 0xFF, 0xFF], "announces 4294967295 bytes; 0 follow"),
            ([0, 0, 0, 0, 1, 9, 2, 0, 0, 0, 0], "message 2 (at byte 6) has compressed flag 2"),
        ]
        for (body, expected) in cases {
            #expect {
                _ = try GRPC.messages(in: body)
            } throws: { error in
                (error as? GRPCFramingError)?.message.contains(expected) == true
            }
        }
    }

    @Test("whole frames are taken off a stream as they complete; a partial one waits for the rest")
    func takingFrames() {
        let first = GRPCMessage(bytes: [1, 2, 3]).framed
        let second = GRPCMessage(bytes: [4]).framed
        var pending = first + second.prefix(3)
        #expect(GRPC.takeFrames(from: &pending) == [first])
        #expect(pending == Array(second.prefix(3)))
        pending += second.dropFirst(3)
        #expect(GRPC.takeFrames(from: &pending) == [second])
        #expect(pending.isEmpty)
        // A length of 4 GiB never completes; an invalid flag stops the cutting.
        var hostile: [UInt8] = [0, 0xFF, 0xFF, 0xFF, 0xFF, 1]
        #expect(GRPC.takeFrames(from: &hostile).isEmpty)
        var badFlag: [UInt8] = [5, 0, 0, 0, 0]
        #expect(GRPC.takeFrames(from: &badFlag).isEmpty)
        #expect(badFlag.count == 5)
    }

    @Test("grpc-message is percent-encoded as the spec says, bounded, and decodes back")
    func percentEncoding() {
        #expect(GRPC.percentEncoded("héllo 100%\n") == "h%C3%A9llo 100%25%0A")
        #expect(GRPC.percentDecoded("h%C3%A9llo 100%25%0A") == "héllo 100%\n")
        // Malformed escapes are kept as they came.
        #expect(GRPC.percentDecoded("50%zz") == "50%zz")
        // Cut at the limit, never inside a character: "é" is two bytes.
        let long = String(repeating: "a", count: 2047) + "é" + String(repeating: "b", count: 5000)
        let encoded = GRPC.percentEncoded(long)
        #expect(encoded == String(repeating: "a", count: 2047))
        #expect(GRPC.percentEncoded(String(repeating: "x", count: 10_000)).utf8.count == GRPC.largestMessageBytes)
    }

    @Test("statuses read from grpc-status, with names; junk is no status")
    func statuses() {
        #expect(GRPCStatus(field: "5") == .notFound)
        #expect(GRPCStatus.notFound.description == "5 (NOT_FOUND)")
        #expect(GRPCStatus(code: 99).description == "99")
        for junk in ["", "-1", "1e3", "99999999999999999999", " 5"] { #expect(GRPCStatus(field: junk) == nil) }
        #expect(GRPCStatus(httpStatus: 502) == .unavailable)
        #expect(GRPCStatus(httpStatus: 404) == .unimplemented)
    }

    @Test("gRPC content types are recognized, gRPC-Web and others are not")
    func contentTypes() {
        for type in [
            "application/grpc", "application/grpc+proto", "Application/GRPC+json; charset=x", "application/grpc ",
        ] {
            #expect(GRPC.isGRPC(contentType: type), "\(type)")
        }
        for type in ["application/grpc-web", "application/grpc-web-text+proto", "application/json", "", nil] {
            #expect(!GRPC.isGRPC(contentType: type), "\(type ?? "nil")")
        }
    }

    @Test("the error answer is 200 application/grpc with the status and its text in the trailers")
    func errorAnswer() {
        let response = GRPC.errorResponse(status: .notFound, message: "no recording: POST /demo.Greeter/SayHello")
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "application/grpc")
        #expect(response.body.isEmpty)
        #expect(response.trailers["grpc-status"] == "5")
        #expect(GRPC.statusMessage(of: response) == "no recording: POST /demo.Greeter/SayHello")
        #expect(GRPC.status(of: response) == .notFound)
    }

    @Test("a Trailers-Only answer's status moves from its headers to its trailers")
    func trailersOnly() {
        let response = HTTP.Response(
            status: 200,
            headers: ["content-type": "application/grpc", "grpc-status": "3", "grpc-message": "bad%20name"])
        let moved = GRPC.movingOutcomeToTrailers(response)
        #expect(moved.headers.fields.map(\.name) == ["content-type"])
        #expect(moved.trailers.fields.map(\.name) == ["grpc-status", "grpc-message"])
        #expect(GRPC.movingOutcomeToTrailers(moved) == moved)
    }
}
