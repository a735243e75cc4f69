#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// The bytes of an IPv4 or IPv6 address written as text, as a certificate's subject alternative name
/// holds them.
enum IPAddressBytes {
    /// 4 or 16 bytes, or nil when `text` is not an IP address.
    static func parse(_ text: String) -> [UInt8]? {
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
