import Foundation

/// The environment `kakapo exec` gives its command (docs/exec.md): `KAKAPO_URL`; in forward mode the
/// proxy variables naming Kakapo; `NO_PROXY` keeping Kakapo's own address direct; and, when Kakapo
/// presents certificates of its CA, the CA variables naming a bundle that trusts it too.
struct ExecEnvironment {
    static let proxyVariables = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]
    static let noProxyVariables = ["NO_PROXY", "no_proxy"]
    static let caVariables = [
        "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "AWS_CA_BUNDLE",
    ]
    /// Where systems keep their CA bundle (Debian and Alpine, Fedora, openSUSE, macOS and the BSDs); the
    /// first one found goes into the bundle.
    static let systemBundles = [
        "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem",
        "/etc/ssl/cert.pem",
    ]
    /// The most read from any one file put into the bundle (a system bundle is about 200 KB).
    static let largestBundlePart = 16 << 20

    /// Kakapo's address, `http(s)://HOST:PORT`.
    var kakapoURL: String
    /// The host of `kakapoURL`, as `NO_PROXY` names it.
    var host: String
    /// The proxy URL, in forward mode (with `--proxy-auth`'s credentials in it when there are some).
    var proxyURL: String?
    /// The CA bundle file, when Kakapo presents certificates of its CA.
    var caBundle: String?

    /// `inherited` with this environment's variables set.
    func applied(to inherited: [String: String]) -> [String: String] {
        var environment = inherited
        environment["KAKAPO_URL"] = kakapoURL
        if let proxyURL {
            for name in Self.proxyVariables { environment[name] = proxyURL }
        }
        // Each variable keeps what it had (tools differ in which one they read), with Kakapo's host added.
        for name in Self.noProxyVariables {
            environment[name] = Self.noProxy(adding: host, to: inherited[name] ?? inherited[name.uppercased()])
        }
        if let caBundle {
            for name in Self.caVariables { environment[name] = caBundle }
        }
        return environment
    }

    /// A `NO_PROXY` list with `host` in it. curl and Python's requests ignore a port in an entry, so the
    /// host is named alone: every port of it is reached directly.
    static func noProxy(adding host: String, to list: String?) -> String {
        var entries = (list ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if !entries.contains(where: { $0.caseInsensitiveCompare(bare) == .orderedSame }) { entries.append(bare) }
        return entries.joined(separator: ",")
    }

    /// `http://USER:PASSWORD@HOST:PORT` with both percent-encoded, or the URL alone without credentials.
    static func proxyURL(scheme: String, host: String, port: Int, credentials: String?) -> String {
        guard let credentials, let colon = credentials.firstIndex(of: ":") else {
            return "\(scheme)://\(host):\(port)"
        }
        let allowed = CharacterSet.urlUserAllowed.subtracting(CharacterSet(charactersIn: ":@/?#[]%"))
        let encode = { (text: Substring) in text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
        let user = encode(credentials[..<colon])
        let password = encode(credentials[credentials.index(after: colon)...])
        return "\(scheme)://\(user):\(password)@\(host):\(port)"
    }

    /// Writes `ca-bundle.pem` into `directory`: the bundles the command's CA variables named, the system's
    /// bundle, then Kakapo's CA certificate, so the command trusts what it trusted before and Kakapo too.
    /// Throws when Kakapo's certificate cannot be read or the file cannot be written.
    static func writeCABundle(
        authorityCertificate: String, into directory: String, inherited: [String: String]
    ) throws -> String {
        var sources: [String] = []
        for name in caVariables {
            if let path = inherited[name], !path.isEmpty, !sources.contains(path) { sources.append(path) }
        }
        if let system = systemBundles.first(where: { FileManager.default.isReadableFile(atPath: $0) }),
            !sources.contains(system)
        {
            sources.append(system)
        }
        var bundle = Data()
        for path in sources {
            // A variable may name a folder or something unreadable; what cannot be read is left out.
            guard let part = try? readPart(path), !part.isEmpty else { continue }
            bundle.append(part)
            if part.last != UInt8(ascii: "\n") { bundle.append(UInt8(ascii: "\n")) }
        }
        bundle.append(try readPart(authorityCertificate))
        let path = (directory as NSString).appendingPathComponent("ca-bundle.pem")
        try bundle.write(to: URL(fileURLWithPath: path), options: .atomic)
        return path
    }

    /// Up to `largestBundlePart` bytes of the regular file at `path`.
    private static func readPart(_ path: String) throws -> Data {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let attributes = try FileManager.default.attributesOfItem(atPath: resolved)
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: resolved))
        defer { try? handle.close() }
        return try handle.read(upToCount: largestBundlePart) ?? Data()
    }
}
