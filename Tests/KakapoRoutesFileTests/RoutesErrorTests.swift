import KakapoHTTP
import KakapoRoutesFile
import KakapoStubs
import Testing

/// `RoutesError` in the shape every Kakapo error has: a code for each kind of failure, the shared location.
@Suite("Routes errors")
struct RoutesErrorTests {
    func error(loading path: String) throws -> RoutesError {
        try #require(throws: RoutesError.self) { try RoutesFile.load(path) }
    }

    @Test(
        "each kind of failure has its code",
        arguments: [
            ("{\"routes\": [}", "routes.json", ErrorCode.syntax),
            ("routes: [\n  {\n", "routes.yaml", .syntax),
            ("{\"routes\": [{\"path\": \"/a\", \"response\": {\"status\": 7}}]}", "routes.json", .invalid),
        ])
    func codes(text: String, name: String, code: ErrorCode) throws {
        let error = try error(loading: try RoutesFileTests.write(text, name: name))
        #expect(error.code == code, "\(error)")
        #expect(error.location?.file?.hasSuffix(name) == true && error.location?.line != nil, "\(error)")
    }

    @Test("a file that is not there is unreadable, and says so with its name")
    func unreadable() throws {
        let error = try error(loading: "/nonexistent/routes.json")
        #expect(error.code == .unreadable)
        #expect(error.description == "/nonexistent/routes.json: no such file")
    }

    @Test("the key path follows the location: file:line:column: key.path: message")
    func description() {
        var error = RoutesError(path: [.key("routes"), .index(2)], message: "wrong")
        #expect(error.description == "routes[2]: wrong")
        error.file = "r.json"
        error.line = 4
        error.column = 9
        #expect(error.location == FileLocation(file: "r.json", line: 4, column: 9))
        #expect(error.description == "r.json:4:9: routes[2]: wrong")
    }
}
