// Kakapo in process, run as its own process so no other test's threads are counted:
// `kakapo-inprocess-thread-probe CASSETTE` answers one request from a route, one from the cassette and one
// miss through URLSession, then prints `answers: STATUS STATUS STATUS` and the name of every thread of
// this process (Linux: /proc/self/task/*/comm), one per line. It links KakapoURLSession alone, so NIO is
// not even in the binary; the test checks that no event-loop thread (`NIO-ELT-...`) exists either.
import Foundation
import KakapoURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: kakapo-inprocess-thread-probe CASSETTE\n".utf8))
    exit(2)
}
let kakapo = try InProcessKakapo(cassette: CommandLine.arguments[1])
kakapo.router.get("/hello/:name") { request in ["hello": try request.parameters.require("name")] }
let session = URLSession(configuration: kakapo.sessionConfiguration())
var statuses: [Int] = []
for path in ["/hello/kakapo", "/users/1", "/not-recorded"] {
    let (_, response) = try await session.data(from: URL(string: "http://api.test" + path)!)
    statuses.append((response as? HTTPURLResponse)?.statusCode ?? 0)
}
print("answers:", statuses.map(String.init).joined(separator: " "))
let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
for task in tasks {
    let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? "?"
    print("thread:", name.trimmingCharacters(in: .whitespacesAndNewlines))
}
await kakapo.shutdown()
