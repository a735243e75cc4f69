import Foundation
import KakapoEngine
import KakapoProxy
import KakapoURLSession
import KakapoUpstream

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Runs `body` with the cassette `directory/name.json`: recorded from `upstream` when the mode records
/// (by default when the file does not exist yet), replayed otherwise. Throws `CassetteTestError` after
/// `body` when any request missed, with the miss report, so XCTest and Swift Testing both fail the test.
///
/// ```swift
/// func testUser() async throws {
///     try await withCassette("UserTests/testUser", upstream: "https://api.example.com") { cassette in
///         let (data, _) = try await cassette.session.data(from: URL(string: "https://api.example.com/users/1")!)
///         XCTAssertFalse(data.isEmpty)
///     }
/// }
/// ```
@discardableResult
public func withCassette<T>(
    _ name: String, in directory: String = "cassettes", upstream: String? = nil, mode: ProxyMode? = nil,
    _ body: (CassetteContext) async throws -> T
) async throws -> T {
    let path = directory + "/" + name + (name.hasSuffix(".json") ? "" : ".json")
    let requested = try mode ?? CassetteRecording.mode()
    let exists = FileManager.default.fileExists(atPath: path)
    let resolved = requested.resolved(cassetteExists: exists)
    let upstream = upstream ?? CassetteRecording.upstream()
    if resolved.usesUpstream && upstream == nil {
        throw CassetteTestError(
            exists
                ? "\(path): mode \(requested.rawValue) records, so it needs an upstream (upstream: or KAKAPO_UPSTREAM)"
                : "\(path) does not exist and there is no upstream to record it from (upstream: or KAKAPO_UPSTREAM)")
    }
    if resolved == .replay && !exists {
        throw CassetteTestError("\(path) does not exist and KAKAPO_RECORD=\(requested.rawValue) does not record it")
    }
    if resolved.records {
        try FileManager.default.createDirectory(
            atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
    }
    let kakapo = try InProcessKakapo(
        configuration: ProxyConfiguration(
            mode: resolved, cassettePath: path,
            upstream: resolved.usesUpstream ? upstream.map { UpstreamConfiguration(baseURL: $0) } : nil))
    let context = CassetteContext(
        kakapo: kakapo, path: path, mode: resolved, session: URLSession(configuration: kakapo.sessionConfiguration()))
    let result: T
    do {
        result = try await body(context)
    } catch {
        await context.socket.stop()
        await kakapo.shutdown()
        throw error
    }
    await context.socket.stop()
    let summary = await kakapo.shutdown()
    if let saveError = summary.saveError { throw CassetteTestError("\(path) could not be saved: \(saveError)") }
    if !summary.misses.isEmpty {
        throw CassetteTestError(
            "\(summary.misses.count) request(s) matched no recording in \(path) (mode \(resolved.rawValue)):\n"
                + summary.text(complete: true)
                + "\nRe-record with KAKAPO_RECORD=all (or new) and an upstream, or fix the request.")
    }
    return result
}
