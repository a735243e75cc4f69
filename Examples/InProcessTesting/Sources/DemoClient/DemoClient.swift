import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A user of the demo API (`tools/demo-api.py`).
public struct User: Codable, Equatable, Sendable {
    public let id: String
    public let name: String
    public let email: String

    public init(id: String, name: String, email: String) {
        self.id = id
        self.name = name
        self.email = email
    }
}

/// The app's client for the demo API: plain URLSession, nothing Kakapo-specific.
public struct DemoClient: Sendable {
    public let baseURL: URL
    public let session: URLSession

    public init(baseURL: URL, session: URLSession = .shared) {
        self.baseURL = baseURL
        self.session = session
    }

    /// A failure the API answered with.
    public struct Failure: Error, Equatable {
        public let status: Int
        public init(status: Int) { self.status = status }
    }

    public func users() async throws -> [User] { try await get("users") }

    public func user(id: String) async throws -> User { try await get("users/\(id)") }

    public func createUser(name: String, email: String) async throws -> User {
        var request = URLRequest(url: baseURL.appendingPathComponent("users"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(["name": name, "email": email])
        return try await send(request)
    }

    private func get<T: Decodable>(_ path: String) async throws -> T {
        try await send(URLRequest(url: baseURL.appendingPathComponent(path)))
    }

    private func send<T: Decodable>(_ request: URLRequest) async throws -> T {
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else { throw Failure(status: status) }
        return try JSONDecoder().decode(T.self, from: data)
    }
}
