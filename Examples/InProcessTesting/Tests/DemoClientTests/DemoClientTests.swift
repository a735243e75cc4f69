import DemoClient
import Foundation
import KakapoTesting
import Testing

/// The app's tests, each with its own cassette under cassettes/DemoClientTests/. The first run records
/// from the real API (KAKAPO_UPSTREAM=http://127.0.0.1:9000, with `python3 tools/demo-api.py` running);
/// every later run, and CI, replays with no network.
@Suite(.cassette(in: "Examples/InProcessTesting/cassettes"))
struct DemoClientTests {
    /// The client under test, talking to Kakapo in process.
    var client: DemoClient {
        DemoClient(baseURL: URL(string: "http://demo.api")!, session: CassetteContext.current!.session)
    }

    @Test func listsUsers() async throws {
        let users = try await client.users()
        #expect(users.map(\.name) == ["Ada Lovelace", "Grace Hopper"])
    }

    @Test func fetchesOneUser() async throws {
        #expect(try await client.user(id: "2").email == "grace@example.com")
    }

    @Test func reportsAnUnknownUser() async throws {
        await #expect(throws: DemoClient.Failure(status: 404)) { try await client.user(id: "42") }
    }

    @Test func createsAUser() async throws {
        let created = try await client.createUser(name: "Katherine Johnson", email: "kj@example.com")
        #expect(created == User(id: "3", name: "Katherine Johnson", email: "kj@example.com"))
    }
}
