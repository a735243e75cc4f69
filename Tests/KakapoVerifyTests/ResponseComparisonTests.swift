import KakapoCassette
import KakapoHTTP
import KakapoJSON
import KakapoVerify
import Testing

/// How `kakapo verify` weighs a live answer against a recorded one, in process: what does not count, what
/// a client should survive, what it may break on.
@Suite("Response comparison")
struct ResponseComparisonTests {
    private static func json(_ text: String, status: Int = 200, _ headers: [(String, String)] = []) -> HTTP.Response {
        var fields = HTTP.Headers()
        fields.add(name: "Content-Type", value: "application/json")
        for (name, value) in headers { fields.add(name: name, value: value) }
        return HTTP.Response(status: status, headers: fields, body: Array(text.utf8))
    }

    private static func verdicts(_ recorded: HTTP.Response, _ live: HTTP.Response, volatile: VolatileFields = .init())
        -> [ResponseComparison.Verdict]
    {
        ResponseComparison().classified(recorded: recorded, live: live, volatile: volatile).map(\.verdict)
    }

    @Test("headers that change on every call and values the interaction marks volatile are not differences")
    func same() throws {
        let recorded = Self.json(#"{"id": 1, "token": "a1"}"#, [("Date", "Mon, 30 Nov 2026 06:00:00 GMT")])
        let live = Self.json(#"{"id": 1, "token": "b2"}"#, [("Date", "Mon, 30 Nov 2026 07:00:00 GMT")])
        let marked = VolatileFields(response: [try #require(VolatileFields.Place("body /token"))])
        #expect(Self.verdicts(recorded, live, volatile: marked).isEmpty)
        // Unmarked, the same token is a difference.
        #expect(!Self.verdicts(recorded, live).isEmpty)
    }

    @Test("a nonce, a UUID or another number of elements is benign; status, a removed member or a type is changed")
    func weighing() {
        let recorded = Self.json(
            #"{"nonce": "n1", "id": "0b7c7d1e-4a8e-4a43-9d0f-7b3f6c7f1a21", "items": [1, 2], "name": "a", "n": 1}"#)
        let benign = Self.json(
            #"{"nonce": "n2", "id": "5f2d9f70-1c1e-4bd4-8d5b-2f6a0e8b9c33", "items": [1, 2, 3], "name": "a", "n": 1}"#)
        #expect(Self.verdicts(recorded, benign).allSatisfy { $0 == .benign })
        #expect(Self.verdicts(recorded, benign).count >= 2)

        #expect(Self.verdicts(recorded, Self.json(#"{"nonce": "n1"}"#, status: 500)).contains(.changed))
        let removed = Self.json(
            #"{"nonce": "n1", "id": "0b7c7d1e-4a8e-4a43-9d0f-7b3f6c7f1a21", "items": [1, 2], "n": 1}"#)
        #expect(Self.verdicts(recorded, removed) == [.changed])
        let retyped = Self.json(
            #"{"nonce": "n1", "id": "0b7c7d1e-4a8e-4a43-9d0f-7b3f6c7f1a21", "items": [1, 2], "name": "a", "n": "1"}"#)
        #expect(Self.verdicts(recorded, retyped) == [.changed])
        #expect(ResponseComparison.Verdict.same < .benign && ResponseComparison.Verdict.benign < .changed)
    }

    @Test("a pointer left out is not compared, nor anything under it")
    func ignored() throws {
        let recorded = Self.json(#"{"meta": {"page": 1, "build": "x"}, "data": [1]}"#)
        let live = Self.json(#"{"meta": {"page": 2}, "data": [1]}"#)
        #expect(!Self.verdicts(recorded, live).isEmpty)
        let comparison = ResponseComparison(ignoredPointers: [try #require(JSONPointer("/meta"))])
        #expect(comparison.classified(recorded: recorded, live: live).isEmpty)
        #expect(comparison.differences(recorded: recorded, live: live).isEmpty)
    }

    @Test("the places two answers differ at, for learn-volatile: headers and JSON leaves, not Content-Length")
    func places() {
        let first = Self.json(#"{"a": 1, "b": {"c": "x"}}"#, [("X-Request-Id", "1"), ("Content-Length", "24")])
        let second = Self.json(#"{"a": 1, "b": {"c": "y"}}"#, [("X-Request-Id", "2"), ("Content-Length", "25")])
        let found = ResponseComparison.differingPlaces(first, second).map(\.text)
        #expect(found.contains("header x-request-id"))
        #expect(found.contains("body /b/c"))
        #expect(!found.contains { $0.contains("content-length") || $0 == "body /a" })
    }
}
