import Foundation

/// The CA certificates upstream TLS trusts: the system's bundle, followed by the `--upstream-ca` file's
/// certificates when it adds some (handed to libcurl in memory).
package enum CABundle {
    /// Where distributions keep the system bundle (Debian and Ubuntu, Fedora and RHEL, openSUSE, Alpine
    /// and macOS).
    package static let systemPaths = [
        "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem",
        "/etc/ssl/cert.pem",
    ]

    /// The system bundle file this machine has, or nil when it has none (a minimal container or root
    /// without the `ca-certificates` package).
    package static var systemBundlePath: String? {
        systemPaths.first { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
    }

    /// What to say when an `https://` upstream must be checked and nothing to check it with is there.
    package static func missingMessage(for baseURL: String) -> String {
        "cannot set up TLS to the upstream \(baseURL): this machine has no CA certificates (none of "
            + systemPaths.joined(separator: ", ")
            + " exists). Install the system's CA certificates (Debian and Ubuntu: apt-get install ca-certificates), "
            + "or pass --upstream-ca FILE with the CA that signed the upstream's certificate"
    }

    /// True when `configuration` talks TLS to its base URL and checks the certificate, yet neither the
    /// system nor `--upstream-ca` provides a CA to check it against: libcurl would fail every request.
    package static func lacksTrust(_ configuration: UpstreamConfiguration) -> Bool {
        configuration.baseURL.lowercased().hasPrefix("https:") && !configuration.insecure
            && configuration.additionalCAFile == nil && systemBundlePath == nil
    }

    /// The combined bundle, or nil when the configuration adds no CA (libcurl's defaults apply). Throws
    /// when an `https://` base URL would be checked against CA certificates this machine does not have.
    static func load(_ configuration: UpstreamConfiguration) throws(UpstreamError) -> [UInt8]? {
        if lacksTrust(configuration) {
            throw UpstreamError(code: .tlsFailure, message: missingMessage(for: configuration.baseURL))
        }
        guard let path = configuration.additionalCAFile else { return nil }
        guard let added = FileManager.default.contents(atPath: path) else {
            throw UpstreamError(code: .tlsFailure, message: "cannot read the upstream CA file \(path)")
        }
        guard String(decoding: added, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw UpstreamError(
                code: .tlsFailure, message: "\(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        var bundle: [UInt8] = []
        if let system = systemBundlePath.flatMap({ FileManager.default.contents(atPath: $0) }) {
            bundle.append(contentsOf: system)
            bundle.append(UInt8(ascii: "\n"))
        }
        bundle.append(contentsOf: added)
        return bundle
    }
}
