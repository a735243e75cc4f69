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
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        socketDescriptor = descriptor
        guard bound else { throw KakapoProcess.Failure(description: "cannot reserve a loopback port") }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(socketDescriptor) }

    public var baseURL: String { "http://127.0.0.1:\(port)" }
}
