import Foundation
import KakapoPostgres
import KakapoTestSupport
import Logging
import PostgresNIO

/// The PostgreSQL server `tools/test.sh` starts (`tools/postgres.sh`): its URL and data folder come from
/// KAKAPO_TEST_POSTGRES_URL and KAKAPO_TEST_POSTGRES_DIR. Each test gets a database of its own.
enum TestDatabase {
    static let url = ProcessInfo.processInfo.environment["KAKAPO_TEST_POSTGRES_URL"]
    static let directory = ProcessInfo.processInfo.environment["KAKAPO_TEST_POSTGRES_DIR"]
    static var available: Bool { url != nil && directory != nil }
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("tools/postgres.sh").path

    /// A new, empty database on the test server, as a `postgres://` URL with the password.
    static func fresh() async throws -> String {
        let server = try PostgresURL(try require(url))
        let name = "kakapo_\(UUID().uuidString.prefix(8).lowercased())"
        let connection = try await PostgresConnection.connect(
            configuration: .init(
                host: server.host, port: server.port, username: server.user, password: server.password,
                database: server.database, tls: .disable),
            id: 1, logger: Logger(label: "test"))
        try await connection.query("CREATE DATABASE \(unescaped: name)", logger: Logger(label: "test"))
        try await connection.close()
        return "postgres://\(server.user):\(server.password ?? "")@\(server.host):\(server.port)/\(name)"
    }

    /// Stops or starts the test server (`tools/postgres.sh stop|start DIR`), waiting until it has (by
    /// polling, so no thread of the test pool is held).
    static func server(_ command: String) async throws {
        let process = try KakapoProcess([script, command, try require(directory)], executable: "/bin/bash")
        guard try await process.waitForExit(timeout: .seconds(90)) == 0 else {
            throw Failure("tools/postgres.sh \(command) failed")
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// `#require` outside a test body.
private func require<T>(_ value: T?) throws -> T {
    guard let value else { throw TestDatabase.Failure("KAKAPO_TEST_POSTGRES_URL and _DIR are not set") }
    return value
}
