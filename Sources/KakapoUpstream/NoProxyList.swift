import KakapoHTTP

/// The hosts that bypass the upstream proxy (`--no-proxy`, `NO_PROXY`): one matcher for libcurl's
/// transfers and for the tunnels Kakapo opens itself. Entries are separated by commas (or spaces):
/// - `*`: every host;
/// - a name (`api.example.com`) or a domain with a leading dot (`.example.com`): that host and its
///   subdomains, as curl and Go read `NO_PROXY` (`*.example.com` is read the same way); a `:port` after a
///   name is ignored;
/// - an IP address (`10.1.2.3`, `::1`, `[::1]`) or a CIDR range (`10.0.0.0/8`, `fd00::/8`): hosts written
///   as such addresses (names are not resolved to compare them).
public struct NoProxyList: Sendable, Equatable, CustomStringConvertible {
    /// The list as given, for the log.
    public let description: String
    private var everything = false
    private var names: [String] = []
    private var ranges: [AddressRange] = []

    /// An IP range: its first bytes and how many of its bits count.
    private struct AddressRange: Sendable, Equatable {
        let bytes: [UInt8]
        let bits: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var remaining = bits
            for (mine, theirs) in zip(bytes, address) where remaining > 0 {
                let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
                if mine & mask != theirs & mask { return false }
                remaining -= 8
            }
            return true
        }
    }

    /// The most entries a list may have.
    static let maximumEntries = 1_024
    /// The longest list accepted, in bytes.
    static let maximumLength = 65_536

    /// An empty list: nothing bypasses the proxy.
    public init() { description = "" }

    /// Parses a list; throws `invalidURL` (naming `source`, such as `--no-proxy` or `NO_PROXY`) for a list
    /// too long, a CIDR range whose prefix is not a number that fits its address, or an empty host.
    public init(parsing text: String, source: String = "--no-proxy") throws(UpstreamError) {
        func invalid(_ why: String) -> UpstreamError {
            UpstreamError(code: .invalidURL, message: "\(source): \(why)")
        }
        guard text.utf8.count <= NoProxyList.maximumLength else {
            throw invalid("the list is longer than \(NoProxyList.maximumLength) bytes")
        }
        let entries = text.split { $0 == "," || $0 == " " || $0 == "\t" }
        guard entries.count <= NoProxyList.maximumEntries else {
            throw invalid("more than \(NoProxyList.maximumEntries) entries")
        }
        description = entries.joined(separator: ",")
        for entry in entries.map({ $0.lowercased() }) {
            if entry == "*" {
                everything = true
                continue
            }
            if let slash = entry.firstIndex(of: "/") {
                let address = IPAddressBytes.parse(NoProxyList.unbracketed(String(entry[..<slash])))
                guard let address, let bits = Int(entry[entry.index(after: slash)...]),
                    (0...(address.count * 8)).contains(bits)
                else { throw invalid("\"\(entry)\" is not a CIDR range such as 10.0.0.0/8 or fd00::/8") }
                ranges.append(AddressRange(bytes: address, bits: bits))
                continue
            }
            if let address = IPAddressBytes.parse(NoProxyList.unbracketed(entry)) {
                ranges.append(AddressRange(bytes: address, bits: address.count * 8))
                continue
            }
            var name = Substring(entry)
            if name.hasPrefix("*.") { name = name.dropFirst(2) }
            while name.hasPrefix(".") { name = name.dropFirst() }
            // A name's port does not count (as with curl); an IPv6 address was taken above.
            if let colon = name.firstIndex(of: ":") { name = name[..<colon] }
            while name.hasSuffix(".") { name = name.dropLast() }
            guard !name.isEmpty else { throw invalid("\"\(entry)\" names no host") }
            names.append(String(name))
        }
    }

    /// Whether the list is empty.
    public var isEmpty: Bool { !everything && names.isEmpty && ranges.isEmpty }

    /// Whether requests to `host` (a name, or an IP address with or without brackets) bypass the proxy.
    public func bypasses(_ host: String) -> Bool {
        if everything { return true }
        if isEmpty { return false }
        var host = NoProxyList.unbracketed(host.lowercased())
        while host.hasSuffix(".") { host.removeLast() }
        if let address = IPAddressBytes.parse(host) {
            return ranges.contains { $0.contains(address) }
        }
        return names.contains { name in
            host == name || (host.hasSuffix(name) && host.utf8.dropLast(name.utf8.count).last == UInt8(ascii: "."))
        }
    }

    private static func unbracketed(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

}
