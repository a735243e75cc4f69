import KakapoEngine
import KakapoProxy
import Testing

/// A per-test cassette for Swift Testing: `@Test(.cassette) func user() async throws { ... }` records
/// `cassettes/<Suite>/<test>.json` on the first run and replays it after; `CassetteContext.current` gives
/// the test its session. On a suite, every test gets its own cassette.
///
/// ```swift
/// @Suite(.cassette(upstream: "http://127.0.0.1:9000")) struct UserTests {
///     @Test func firstUser() async throws {
///         let session = try #require(CassetteContext.current).session
///         let (data, _) = try await session.data(from: URL(string: "http://api.test/users/1")!)
///     }
/// }
/// ```
public struct CassetteTrait: TestTrait, SuiteTrait, TestScoping {
    /// The cassette's name without `.json`; nil names it after the suite and the test.
    public let name: String?
    public let directory: String
    public let upstream: String?
    /// The mode; nil reads `KAKAPO_RECORD` (`once` by default, `none` when `CI` is set).
    public let mode: ProxyMode?

    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // On a suite the trait is applied to each of its tests, never to the suite as a whole.
        guard !test.isSuite else {
            try await function()
            return
        }
        try await withCassette(name ?? CassetteTrait.defaultName(test), in: directory, upstream: upstream, mode: mode) {
            context in
            try await CassetteContext.$current.withValue(context) { try await function() }
        }
    }

    /// `Suite/Nested/test` from the test's identity (argument lists dropped).
    static func defaultName(_ test: Test) -> String {
        let components = test.id.nameComponents.map { component in
            component.split(separator: "(", maxSplits: 1).first.map(String.init) ?? component
        }
        return components.joined(separator: "/")
    }
}

extension Trait where Self == CassetteTrait {
    /// A cassette for this test (or each test of this suite); see `CassetteTrait`.
    public static func cassette(
        _ name: String? = nil, in directory: String = "cassettes", upstream: String? = nil, mode: ProxyMode? = nil
    ) -> Self {
        CassetteTrait(name: name, directory: directory, upstream: upstream, mode: mode)
    }

    /// A cassette named after the suite and the test, recorded from `KAKAPO_UPSTREAM` when it records.
    public static var cassette: Self { .cassette() }
}
