/// Which hosts a record filter's pattern or an `--intercept` names: one host, the subdomains of a domain
/// (`*.example.com`: any depth, not example.com itself), or any host. Hosts are compared lowercased.
package enum HostPattern: Hashable {
    case any
    case exactly(String)
    /// Hosts ending in this suffix, which starts with a dot.
    case subdomains(ofSuffix: String)

    /// `*.example.com` for the subdomains of example.com, else the one host `name` (lowercased).
    package init(name: String) {
        let name = name.lowercased()
        self = name.hasPrefix("*.") ? .subdomains(ofSuffix: String(name.dropFirst())) : .exactly(name)
    }

    /// Whether `host` (lowercased) is one this pattern names.
    package func matches(_ host: String) -> Bool {
        switch self {
        case .any: true
        case .exactly(let name): host == name
        case .subdomains(let suffix): host.utf8.count > suffix.utf8.count && host.hasSuffix(suffix)
        }
    }
}
