import Foundation
import Kakapo
import KakapoTestSupport
import Testing

/// `{{uuid}}` and `{{now}}` give one value per answer; `{{uuid.new}}` and `{{now.new}}` a fresh one each time.
@Suite("Route templates: one uuid per answer")
struct TemplateValueTests {
    @Test("{{uuid}} twice in one answer is the same id; the next answer has another", .enabled(if: Curl.isAvailable))
    func oneUUIDPerAnswer() async throws {
        let harness = try await ProxyHarness.serving(
            routes: #"""
                {"routes": [{"method": "POST", "path": "/users", "response": {"status": 201,
                  "headers": {"Location": "/users/{{uuid}}", "X-At": "{{now}}"},
                  "json": {"id": "{{uuid}}", "self": "/users/{{uuid}}", "at": "{{now}}",
                           "other": "{{uuid.new}}", "another": "{{uuid.new}}", "clock": "{{now.new}}"}}}]}
                """#)
        defer { Task { await harness.stop() } }
        var ids: Set<String> = []
        for _ in 0..<2 {
            let result = try await Curl.run([
                "--include", "-X", "POST", "--data-binary", "{}", "http://127.0.0.1:\(harness.port)/users",
            ])
            #expect(result.status == 0, "\(result.error)")
            let text = result.output.replacingOccurrences(of: "\r\n", with: "\n")
            let parts = text.components(separatedBy: "\n\n")
            let head = parts[0].split(separator: "\n").map(String.init)
            func header(_ name: String) -> String? {
                head.first { $0.lowercased().hasPrefix(name.lowercased() + ":") }.map {
                    String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces)
                }
            }
            let body = try JSONParser.parse(Array(parts.dropFirst().joined(separator: "\n\n").utf8))
            let id = try #require(body["id"]?.stringValue)
            #expect(UUID(uuidString: id) != nil)
            #expect(header("Location") == "/users/\(id)")
            #expect(body["self"]?.stringValue == "/users/\(id)")
            #expect(header("X-At") == body["at"]?.stringValue)
            let other = try #require(body["other"]?.stringValue)
            let another = try #require(body["another"]?.stringValue)
            #expect(UUID(uuidString: other) != nil)
            #expect(Set([id, other, another]).count == 3, "uuid.new is fresh each time it appears")
            #expect(body["clock"]?.stringValue != nil)
            ids.insert(id)
        }
        #expect(ids.count == 2, "each answer has its own uuid")
    }
}
