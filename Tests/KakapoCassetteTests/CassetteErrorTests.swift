import KakapoCassette
import KakapoHTTP
import Testing

/// `CassetteError` in the shape every Kakapo error has, and the `file:line:column` it shares with the others.
@Suite("Cassette errors")
struct CassetteErrorTests {
    @Test(
        "a location leaves out what is unknown",
        arguments: [
            (FileLocation(file: "api.json", line: 14, column: 7), "api.json:14:7"),
            (FileLocation(file: "api.json", line: 14), "api.json:14"),
            (FileLocation(file: "api.json", column: 7), "api.json"),
            (FileLocation(line: 3, column: 9), "3:9"),
            (FileLocation(), ""),
        ])
    func locationDescription(location: FileLocation, expected: String) {
        #expect(location.description == expected)
        #expect(location.isEmpty == expected.isEmpty)
    }

    @Test("a cassette error is a KakapoError with its code, message and location, printed file:line:column: message")
    func sharedShape() throws {
        let error: any Error = CassetteError(
            code: .syntax, file: "cassettes/api.json", line: 14, column: 7, message: "expected ',' or '}'")
        let shared = try #require(error as? any KakapoError)
        #expect(shared.code == .syntax && shared.code.name == "syntax")
        #expect(shared.location == FileLocation(file: "cassettes/api.json", line: 14, column: 7))
        #expect(shared.message == "expected ',' or '}'")
        #expect(shared.cause == nil)
        #expect("\(shared)" == "cassettes/api.json:14:7: expected ',' or '}'")
        let whole = CassetteError(code: .locked, file: "api.json", message: "a recording holds the lock")
        #expect(whole.description == "api.json: a recording holds the lock")
        #expect(whole.line == nil && whole.file == "api.json")
    }
}
