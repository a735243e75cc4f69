import KakapoHTTP
import KakapoJSON
import Testing

@testable import KakapoGraphQL

@Suite("GraphQL documents")
struct GraphQLDocumentTests {
    @Test("whitespace, commas and comments do not count; strings and block strings are kept exactly")
    func normalizes() throws {
        let a = try #require(GraphQLDocument("query GetUser($id: ID!) {\n  user(id: $id) { name, email }\n}"))
        let b = try #require(GraphQLDocument("# who\nquery GetUser( $id:ID! ){user(id:$id){name email}}"))
        #expect(a.normalized == b.normalized)
        #expect(a.normalized == "query GetUser ( $ id : ID ! ) { user ( id : $ id ) { name email } }")
        let s1 = try #require(GraphQLDocument(#"{ search(text: "a,  b # c") }"#))
        let s2 = try #require(GraphQLDocument(#"{ search(text: "a, b # c") }"#))
        #expect(s1.normalized != s2.normalized)
        let block = try #require(GraphQLDocument("{ f(t: \"\"\"x \\\"\"\" ,y\"\"\") }"))
        #expect(block.normalized == "{ f ( t : \"\"\"x \\\"\"\" ,y\"\"\" ) }")
    }

    @Test("finds operations and their kinds, skipping fragments and brackets in variable defaults")
    func operations() throws {
        let document = try #require(
            GraphQLDocument(
                "fragment F on User { id } query A($f: In = {a: [1]}) { u { ...F } } mutation B { x } subscription { y }"
            ))
        #expect(document.operations.map(\.kind) == [.query, .mutation, .subscription])
        #expect(document.operations.map(\.name) == ["A", "B", nil])
        #expect(try #require(GraphQLDocument("{ me { id } }")).operation(named: nil)?.name == nil)
    }

    @Test("text that is not an executable document is not GraphQL")
    func refuses() {
        for text in ["red shoes", "", "{ a ", "{ a } }", "query { \"open }", "type User { id: ID }", "# only"] {
            #expect(GraphQLDocument(text) == nil, "\(text)")
        }
    }

    @Test("names the line and column where the request's document first differs")
    func firstDifference() throws {
        let live = try #require(GraphQLDocument("query A {\n  user {\n    name\n    emial\n  }\n}"))
        let recorded = try #require(GraphQLDocument("query A { user { name email } }"))
        #expect(live.firstDifference(from: recorded)! == (4, 5))
        #expect(live.firstDifference(from: live) == nil)
        let shorter = try #require(GraphQLDocument("query A { user { name } }"))
        #expect(shorter.firstDifference(from: recorded)! == (1, 23))
    }

    @Test("deep nesting and long documents are read in one pass, without recursion")
    func hostile() throws {
        let deep = String(repeating: "{a", count: 200_000) + String(repeating: "}", count: 200_000)
        #expect(GraphQLDocument(deep)?.operationCount == 1)
        let many = String(repeating: "{a}", count: 100_000)
        #expect(GraphQLDocument(many)?.operations.count == GraphQLDocument.operationLimit)
        #expect(GraphQLDocument(String(repeating: "\"", count: 10_001)) == nil)
    }

    @Test("detects the three forms and a batch, and labels them")
    func detection() throws {
        let post = HTTP.Request(
            method: .post, target: "/graphql", headers: ["Content-Type": "application/json"],
            body: Array(#"{"query":"query GetUser { me }","variables":{"id":1}}"#.utf8))
        let json = try JSONParser.parse(post.body)
        #expect(GraphQLRequest(post, json: { json })?.label == "query GetUser")
        let batch = try JSONParser.parse(#"[{"query":"query A { a }"},{"query":"mutation B { b }"}]"#)
        #expect(GraphQLRequest(json: batch)?.label == "batch: query A, mutation B")
        let get = HTTP.Request(
            method: .get, target: "/graphql?query=%7B%20me%20%7D&variables=%7B%22id%22%3A1%7D&operationName=X")
        let fromGet = try #require(GraphQLRequest(outsideJSONBody: get))
        #expect(fromGet.label == "operation X")
        #expect(fromGet.operations[0].variables == ["id": 1])
        let raw = HTTP.Request(
            method: .post, target: "/graphql", headers: ["Content-Type": "application/graphql"],
            body: Array("mutation M { m }".utf8))
        #expect(GraphQLRequest(outsideJSONBody: raw)?.label == "mutation M")
        #expect(GraphQLRequest(outsideJSONBody: HTTP.Request(method: .get, target: "/search?q=query=1")) == nil)
        #expect(GraphQLRequest(json: ["query": "red shoes"]) == nil)
    }

    @Test("an empty operationName and empty variables are the same as none, as GraphQL servers read them")
    func emptyMeansAbsent() throws {
        let plain = try #require(GraphQLRequest(json: ["query": "{ me }"]))
        let empty = try #require(GraphQLRequest(json: ["query": "{ me }", "operationName": "", "variables": [:]]))
        #expect(empty.operations[0].operationName == nil && empty.operations[0].variables == nil)
        #expect(empty.label == plain.label)
        let get = try #require(
            GraphQLRequest(
                outsideJSONBody: HTTP.Request(
                    method: .get, target: "/graphql?query=%7B%20me%20%7D&operationName=&variables=")
            ))
        #expect(get.operations[0].operationName == nil && get.operations[0].variables == nil)
    }
}

@Suite("GraphQL differences")
struct GraphQLDifferencesTests {
    @Test("a batch of another size, per-operation lines, and secret variables without their values")
    func lines() throws {
        let recorded = try #require(
            GraphQLRequest(
                json: try JSONParser.parse(
                    #"[{"query":"query A { a }","variables":{"password":"x","n":1}},{"query":"query B { b }"}]"#)))
        let live = try #require(
            GraphQLRequest(
                json: try JSONParser.parse(
                    #"[{"query":"query A { a }","variables":{"password":"y","n":"1"}},{"query":"query C { b }"}]"#)))
        let differences = GraphQLDifferences(
            recorded: recorded, recordedForm: recorded.matchingForm, live: live, liveForm: live.matchingForm,
            hidesValue: { $0 == "password" })
        #expect(
            differences.lines == [
                "batch #1 variables /password differ", #"batch #1 variables /n: "1" here, 1 recorded"#,
                "batch #2 operation: C here, B recorded", "batch #2 query: differs at line 1 column 7",
            ])
        #expect(differences.operationDiffers)
        let single = try #require(GraphQLRequest(json: ["query": "{ a }"]))
        let other = GraphQLDifferences(
            recorded: recorded, recordedForm: recorded.matchingForm, live: single, liveForm: single.matchingForm,
            hidesValue: { _ in false })
        #expect(other.lines == ["batch: one operation here, a batch of 2 recorded"])
    }
}

@Suite("GraphQL input from outside")
struct GraphQLHostileInputTests {
    @Test("random documents neither crash the reader nor the comparison")
    func randomDocuments() throws {
        let alphabet = Array("{}()[]\"\\#,.:$!@=|&\n\r\t aQm1-e+\u{00E9}".utf8) + [0xEF, 0xBB, 0xBF, 0x80]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        let anchor = try #require(GraphQLDocument("query A { a }"))
        for _ in 0..<3_000 {
            let bytes = (0..<(next() % 40)).map { _ in alphabet[next() % alphabet.count] }
            guard let document = GraphQLDocument(String(decoding: bytes, as: UTF8.self)) else { continue }
            _ = document.firstDifference(from: anchor)
            _ = anchor.firstDifference(from: document)
        }
    }

    @Test("an ignored pointer that removes a batch element does not trip the miss lines")
    func removedElement() throws {
        let batch = try #require(
            GraphQLRequest(json: try JSONParser.parse(#"[{"query":"query A { a }"},{"query":"query B { b }"}]"#)))
        let shorter = batch.matchingForm.replacing(JSONPointer("/1")!, with: nil)
        let differences = GraphQLDifferences(
            recorded: batch, recordedForm: shorter, live: batch, liveForm: batch.matchingForm,
            hidesValue: { _ in false })
        #expect(differences.lines.isEmpty)
    }
}

@Suite("GraphQL content type")
struct GraphQLContentTypeTests {
    @Test("application/graphql in any case and with parameters; not graphql-response")
    func contentType() {
        #expect(GraphQLRequest.isGraphQLType("application/graphql"))
        #expect(GraphQLRequest.isGraphQLType("Application/GraphQL; charset=utf-8"))
        #expect(!GraphQLRequest.isGraphQLType("application/graphql-response+json"))
        #expect(!GraphQLRequest.isGraphQLType("application/json"))
    }
}
