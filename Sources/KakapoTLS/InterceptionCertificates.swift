import Foundation
import KakapoProxy
import NIOCore
import NIOSSL
import Synchronization

/// Terminates TLS for intercepted hosts with certificates Kakapo's CA makes on demand: one per host,
/// kept for the `capacity` hosts used most recently. A client that names ever new hosts (50,000 cost
/// 772 MB when every certificate was kept) makes older ones be dropped, and a host seen again after its
/// certificate was dropped gets a new one.
public struct InterceptionCertificates: TLSTermination {
    public let authority: CertificateAuthority
    /// How many hosts' certificates are kept at most.
    public let capacity: Int
    /// What ALPN offers clients, in order of preference (`["h2", "http/1.1"]` when the server speaks HTTP/2).
    public let applicationProtocols: [String]
    private let cache: CacheBox

    /// Certificates by host with the tick of their last use; the least recently used goes first.
    struct Cache {
        var contexts: [String: (context: NIOSSLContext, used: UInt64)] = [:]
        var clock: UInt64 = 0
    }

    /// The cache behind its lock, shared by every copy of this value.
    private final class CacheBox: Sendable {
        let mutex = Mutex(Cache())
    }

    /// `capacity` (at least 1) bounds the certificates kept; the default keeps 1,024 hosts, about 14 MB.
    public init(authority: CertificateAuthority, capacity: Int = 1024, applicationProtocols: [String] = ["http/1.1"]) {
        self.authority = authority
        self.applicationProtocols = applicationProtocols
        self.capacity = max(1, capacity)
        self.cache = CacheBox()
    }

    public func makeServerHandler(forHost host: String) throws -> any ChannelHandler {
        NIOSSLServerHandler(context: try context(forHost: host))
    }

    public func closeReason(for error: any Error) -> TLSCloseReason {
        TLSCloseClassifier.reason(for: error)
    }

    /// The TLS context for `host`: the kept one, or a new one (which may push out the least recently
    /// used).
    func context(forHost host: String) throws -> NIOSSLContext {
        let cached = cache.mutex.withLock { cache -> NIOSSLContext? in
            cache.clock += 1
            guard let entry = cache.contexts[host] else { return nil }
            cache.contexts[host]?.used = cache.clock
            return entry.context
        }
        if let cached { return cached }
        // Made outside the lock: signing takes a while, and other hosts need not wait for it.
        let context = try authority.serverContext(for: [host], applicationProtocols: applicationProtocols)
        return cache.mutex.withLock { cache in
            // Another connection to the same host may have made one meanwhile: both work, one is kept.
            if let raced = cache.contexts[host] { return raced.context }
            cache.contexts[host] = (context, cache.clock)
            if cache.contexts.count > capacity,
                let oldest = cache.contexts.min(by: { $0.value.used < $1.value.used })?.key
            {
                cache.contexts[oldest] = nil
            }
            return context
        }
    }

    /// How many hosts' certificates are kept now.
    var kept: Int { cache.mutex.withLock { $0.contexts.count } }
}
