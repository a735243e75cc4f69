import Foundation

/// The CA certificates upstream TLS trusts when `--upstream-ca` adds some: the system's bundle followed
/// by the file's certificates, handed to libcurl in memory.
enum CABundle {
    /// Where distributions keep the system bundle (Debian and Ubuntu, Fedora and RHEL, openSUSE, Alpine
    /// and macOS).
    static let systemPaths = [
        "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem",
        "/etc/ssl/cert.pem",
    ]

    /// The combined bundle, or nil when the configuration adds no CA (libcurl's defaults apply).
    static func load(_ configuration: UpstreamConfiguration) throws(UpstreamError) -> [UInt8]? {
        guard let path = configuration.additionalCAFile else { return nil }
        guard let added = FileManager.default.contents(atPath: path) else {
            throw UpstreamError(code: .tlsFailure, message: "cannot read the upstream CA file \(path)")
        }
        guard String(decoding: added, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw UpstreamError(
                code: .tlsFailure, message: "\(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        var bundle: [UInt8] = []
        if let system = systemPaths.lazy.compactMap({ FileManager.default.contents(atPath: $0) }).first {
            bundle.append(contentsOf: system)
            bundle.append(UInt8(ascii: "\n"))
        }
        bundle.append(contentsOf: added)
        return bundle
    }
}
