import Foundation
import KakapoCassette
import Logging
import Testing

@testable import KakapoEngine

/// `ProxyCredentials`: what `--proxy-auth` accepts, and what a hostile `Proxy-Authorization` gets.
@Suite("Forward proxy credentials: checking")
struct ProxyCredentialsTests {
    let credentials: ProxyCredentials

    init() throws {
        credentials = try ProxyCredentials("kea:correct-horse-battery")
    }

    static func basic(_ text: String) -> [String] { ["Basic " + Data(text.utf8).base64EncodedString()] }

    @Test("the user and password are accepted, with or without a session after USER+; the password never shows")
    func accepted() {
        #expect(credentials.verdict(Self.basic("kea:correct-horse-battery")) == .accepted(session: nil))
        #expect(
            credentials.verdict(Self.basic("kea+36a7cdf5933c0bb4:correct-horse-battery"))
                == .accepted(session: "36a7cdf5933c0bb4"))
        #expect(
            credentials.verdict(["basic  " + Data("kea:correct-horse-battery".utf8).base64EncodedString()])
                == .accepted(session: nil))
        #expect(credentials.description == "kea:***")
        #expect(!"\(credentials)".contains("horse"))
    }

    @Test("anything else is refused: other passwords and users, other schemes, broken or oversized input")
    func refused() {
        let refusedValues: [[String]] = [
            [],
            Self.basic("kea:correct-horse-batter"),
            Self.basic("kea:correct-horse-battery!"),
            Self.basic("kea:"),
            Self.basic("keas:correct-horse-battery"),
            Self.basic("ke:correct-horse-battery"),
            Self.basic("kea+:correct-horse-battery"),
            Self.basic("kea+a/b:correct-horse-battery"),
            Self.basic("kea+a\r\nX-Injected:correct-horse-battery"),
            Self.basic("kea+" + String(repeating: "a", count: 129) + ":correct-horse-battery"),
            Self.basic("36a7cdf5933c0bb4:"),
            Self.basic("kea"),
            Self.basic("kea:correct-horse-battery") + Self.basic("kea:correct-horse-battery"),
            ["Bearer " + Data("kea:correct-horse-battery".utf8).base64EncodedString()],
            ["Basic"],
            ["Basic !!!not base64!!!"],
            ["Basic " + String(repeating: "QUFB", count: 300)],
            [String(repeating: "x", count: 100_000)],
        ]
        for values in refusedValues {
            #expect(credentials.verdict(values) == .refused, "\(values.map { $0.prefix(80) })")
        }
        #expect(
            credentials.verdict(Self.basic("kea+" + String(repeating: "a", count: 128) + ":correct-horse-battery"))
                == .accepted(session: String(repeating: "a", count: 128)))
    }

    @Test("what --proxy-auth refuses, named without the password")
    func invalid() {
        let cases = [
            ("kea", "no ':'"), (":correct-horse-battery", "user name"), ("kea:seven77", "at least 8"),
            ("kea:correct\thorse", "control"), ("kea:" + String(repeating: "p", count: 600), "at most 512"),
        ]
        for (text, message) in cases {
            #expect(throws: ProxyError.self) { try ProxyCredentials(text) }
            do {
                _ = try ProxyCredentials(text)
            } catch {
                #expect(error.message.contains(message), "\(error.message)")
                #expect(!error.message.contains("seven77") && !error.message.contains("horse"))
            }
        }
        // A ':' in the password is the password's.
        #expect(throws: Never.self) { try ProxyCredentials("kea:pass:word:1") }
    }

    @Test("a session's proxy URL names the user before the id, never the password")
    func sessionProxyURL() throws {
        let directory = NSTemporaryDirectory() + "kakapo-proxy-user-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func registry(_ user: String?) throws -> SessionRegistry {
            let registry = try SessionRegistry(
                directory: directory, timeout: .seconds(60), defaultMode: .replay, defaultMatching: MatchOptions(),
                redactor: Redactor(), repeatPolicy: .repeatLast, hasUpstream: false, proxyUser: user,
                logger: Logger(label: "test"))
            registry.port.withLock { $0 = 8080 }
            return registry
        }
        let plain = try registry(nil)
        #expect(plain.proxyURL(for: "abc") == "http://abc:@127.0.0.1:8080")
        _ = plain.closeAll()
        let authenticated = try registry("k@a")
        #expect(authenticated.proxyURL(for: "abc") == "http://k%40a+abc@127.0.0.1:8080")
        _ = authenticated.closeAll()
    }
}
