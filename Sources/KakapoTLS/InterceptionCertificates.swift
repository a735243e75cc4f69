import Foundation
import KakapoProxy
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// Terminates TLS for intercepted hosts with certificates Kakapo's CA makes on demand: one per host,
/// kept for the `capacity` hosts used most recently. A client that names ever new hosts (50,000 cost
/// 772 MB when every certificate was kept) makes older ones be dropped, and a host seen again after its
/// certificate was dropped gets a new one.
public struct InterceptionCertificates: TLSTermination {
    public let authority: CertificateAuthority
    /// How many hosts' certificates are kept at most.
    public let capacity: Int
    private let cache: NIOLockedValueBox<Cache>

    /// Certificates by host, the most recently used kept; `minter` makes new ones.
    struct Cache {
        var contexts: [String: (context: NIOSSLContext, used: UInt64)] = [:]
        var clock: UInt64 = 0
        /// The authority that makes new certificates. It keeps every context it made, so once it made
        /// `capacity` of them it is replaced by a fresh copy of the same CA (loaded from its files): what
        /// the old one kept goes with it.
        var minter: CertificateAuthority
        var minted = 0
    }

    /// `capacity` (at least 1) bounds the certificates kept; the default keeps 1,024 hosts, about 14 MB.
    public init(authority: CertificateAuthority, capacity: Int = 1024) {
        self.authority = authority
        self.capacity = max(1, capacity)
        self.cache = NIOLockedValueBox(Cache(minter: authority))
    }

    public func makeServerHandler(forHost host: String) throws -> any ChannelHandler {
        NIOSSLServerHandler(context: try context(forHost: host))
    }

    /// The TLS context for `host`: the kept one, or a new one (which may push out the least recently
    /// used).
    func context(forHost host: String) throws -> NIOSSLContext {
        let (cached, minter) = cache.withLockedValue { cache -> (NIOSSLContext?, CertificateAuthority) in
            cache.clock += 1
            if let entry = cache.contexts[host] {
                cache.contexts[host]?.used = cache.clock
                return (entry.context, cache.minter)
            }
            return (nil, cache.minter)
        }
        if let cached { return cached }
        // Made outside the lock: signing takes a while, and other hosts need not wait for it.
        let context = try minter.serverContext(for: [host])
        let retiring = cache.withLockedValue { cache -> Bool in
            if cache.minter === minter { cache.minted += 1 }
            cache.contexts[host] = (context, cache.clock)
            if cache.contexts.count > capacity,
                let oldest = cache.contexts.min(by: { $0.value.used < $1.value.used })?.key
            {
                cache.contexts[oldest] = nil
            }
            return cache.minter === minter && cache.minted >= capacity
        }
        if retiring, let fresh = freshMinter() {
            cache.withLockedValue { cache in
                if cache.minter === minter {
                    cache.minter = fresh
                    cache.minted = 0
                }
            }
        }
        return context
    }

    /// A new copy of the CA, loaded from its files, with nothing cached; nil (the current minter goes on)
    /// when the files are gone or now hold another CA.
    private func freshMinter() -> CertificateAuthority? {
        let files = FileManager.default
        guard files.fileExists(atPath: authority.certificatePath), files.fileExists(atPath: authority.keyPath),
            (authority.certificatePath as NSString).lastPathComponent == CertificateAuthority.certificateFileName,
            (authority.keyPath as NSString).deletingLastPathComponent
                == (authority.certificatePath as NSString).deletingLastPathComponent,
            let fresh = try? CertificateAuthority.loadOrCreate(
                directory: (authority.certificatePath as NSString).deletingLastPathComponent),
            fresh.certificate == authority.certificate
        else { return nil }
        return fresh
    }

    /// How many hosts' certificates are kept now, and how many the current minter made.
    var kept: (hosts: Int, minted: Int) {
        cache.withLockedValue { ($0.contexts.count, $0.minted) }
    }
}
