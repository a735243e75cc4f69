#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// The bytes of an IPv4 or IPv6 address written as text (an IPv6 one with or without brackets), as a
/// certificate's subject alternative name holds them and as `--no-proxy` ranges compare them.
package enum IPAddressBytes {
    /// 4 or 16 bytes, or nil when `text` is not an IP address.
    package static func parse(_ text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count < 64 else { return nil }
        var host = text
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}
