import Foundation

/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (also `postgresql://`), read into its parts.
public struct PostgresURL: Sendable, CustomStringConvertible {
    public let user: String
    public let password: String?
    public let host: String
    public let port: Int
    public let database: String

    /// Reads `text`; the error says what is missing or wrong.
    public init(_ text: String) throws(SharedStoreError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
            scheme == "postgres" || scheme == "postgresql"
        else {
            throw SharedStoreError(
                "\(PostgresURL.redacted(text)) is not a postgres:// URL (postgres://USER@HOST:PORT/DB)")
        }
        guard let user = components.percentEncodedUser.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw SharedStoreError("\(PostgresURL.redacted(text)) names no user (postgres://USER@HOST:PORT/DB)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw SharedStoreError("\(PostgresURL.redacted(text)) names no host (postgres://USER@HOST:PORT/DB)")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw SharedStoreError("\(PostgresURL.redacted(text)) names no database (postgres://USER@HOST:PORT/DB)")
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw SharedStoreError("\(PostgresURL.redacted(text)): port \(port) is out of range")
        }
        self.user = user
        self.password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        self.host = host
        self.port = components.port ?? 5432
        self.database = database.removingPercentEncoding ?? database
    }

    /// The URL without its password, for messages and logs.
    public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    /// `text` with any password replaced, for messages about a URL that could not be read.
    static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@"), let scheme = text.range(of: "://"),
            let colon = text[scheme.upperBound..<at].firstIndex(of: ":")
        else { return text }
        return String(text[..<colon]) + ":***" + String(text[at...])
    }
}
