import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loopback port that refuses connections for as long as this value lives: bound, never listening,
/// so no other server of a parallel test can take it (a stopped server's port can be reused at once).
public final class ClosedPort: Sendable {
    private let socketDescriptor: Int32
    public let port: Int

    public init() throws {
        (socketDescriptor, port) = try LoopbackSocket.bound()
    }

    deinit { close(socketDescriptor) }

    public var baseURL: String { "http://127.0.0.1:\(port)" }
}
