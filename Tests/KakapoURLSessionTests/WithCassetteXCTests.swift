import Foundation
import Kakapo
import KakapoTestSupport
import KakapoTesting
import XCTest

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `withCassette` from XCTest: a miss makes it throw, which fails the test.
final class WithCassetteXCTests: XCTestCase {
    func testReplaysAndThrowsOnAMiss() async throws {
        let directory = try Fixtures.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/XCT", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: "Tests/KakapoURLSessionTests/Fixtures/cassettes/TraitTests/replaysItsOwnCassette.json",
            toPath: directory + "/XCT/hello.json")
        let body = try await withCassette("XCT/hello", in: directory, mode: .replay) { cassette in
            try await cassette.session.data(from: URL(string: "http://api.test/hello")!).0
        }
        XCTAssertEqual(String(decoding: body, as: UTF8.self), #"{"hello":"trait"}"#)
        do {
            try await withCassette("XCT/hello", in: directory, mode: .replay) { cassette in
                _ = try await cassette.session.data(from: URL(string: "http://api.test/bye")!)
            }
            XCTFail("a miss did not throw")
        } catch let error as CassetteTestError {
            XCTAssertTrue(error.description.contains("miss: GET /bye"), error.description)
        }
    }
}
