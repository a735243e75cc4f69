import Crypto
import Foundation
import KakapoHTTP
import NIOSSL
import SwiftASN1
import X509

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Kakapo's own certificate authority: a P-256 key and a self-signed CA certificate kept in a folder
/// (`~/.kakapo/ca` unless told otherwise), created on first use. It signs the certificates Kakapo
/// answers intercepted hosts with. The key file is readable by its owner only and never leaves the
/// folder.
public final class CertificateAuthority: Sendable {
    /// The CA certificate's file name inside the folder.
    public static let certificateFileName = "kakapo-ca.pem"
    /// The CA key's file name inside the folder.
    public static let keyFileName = "kakapo-ca-key.pem"

    /// The folder Kakapo uses when none is given: `$HOME/.kakapo/ca`, or the account's home folder's
    /// when `HOME` is unset or empty (as every command-line tool does).
    public static var defaultDirectory: String {
        defaultDirectory(environment: ProcessInfo.processInfo.environment)
    }

    /// The default folder for the given environment: `$HOME/.kakapo/ca` when `HOME` is set and not
    /// empty, else under the account's home folder.
    public static func defaultDirectory(environment: [String: String]) -> String {
        let home: String
        if let value = environment["HOME"], !value.isEmpty {
            home = value
        } else {
            home = FileManager.default.homeDirectoryForCurrentUser.path
        }
        return absolutePath(((home as NSString).appendingPathComponent(".kakapo/ca")))
    }

    /// `path` made absolute against the working directory (when relative) and standardized, so the
    /// paths Kakapo prints can be pasted into a command run anywhere.
    public static func absolutePath(_ path: String) -> String {
        let absolute: String
        if path.hasPrefix("/") {
            absolute = path
        } else {
            absolute = (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(path)
        }
        return (absolute as NSString).standardizingPath
    }

    /// The path of the CA certificate (PEM), the file clients are told to trust.
    public let certificatePath: String
    /// The path of the CA's private key (PEM, mode 0600).
    public let keyPath: String
    /// The CA certificate.
    public let certificate: Certificate
    private let key: Certificate.PrivateKey
    /// One key for every leaf certificate this process makes: generating a key per host costs more and
    /// protects nothing, since every leaf is signed by the same CA.
    private let leafKey = P256.Signing.PrivateKey()

    /// Loads the CA kept in `directory`, or creates it there (folder mode 0700, key mode 0600) when the
    /// folder has neither file. Throws when only one of the two files is there or one cannot be read.
    /// A relative `directory` is taken from the working directory, and every path the CA reports is absolute.
    public static func loadOrCreate(directory given: String) throws(TLSSetupError) -> CertificateAuthority {
        let directory = absolutePath(given)
        let certificatePath = (directory as NSString).appendingPathComponent(certificateFileName)
        let keyPath = (directory as NSString).appendingPathComponent(keyFileName)
        let files = FileManager.default
        switch (files.fileExists(atPath: certificatePath), files.fileExists(atPath: keyPath)) {
        case (true, true):
            return try load(certificatePath: certificatePath, keyPath: keyPath)
        case (false, false):
            return try create(directory: directory, certificatePath: certificatePath, keyPath: keyPath)
        case (true, false):
            throw TLSSetupError(
                "\(directory) has the CA certificate but not its key (\(keyFileName)): restore the key, or remove the folder to make a new CA (clients must then trust the new one)"
            )
        case (false, true):
            throw TLSSetupError(
                "\(directory) has the CA key but not its certificate (\(certificateFileName)): restore it, or remove the folder to make a new CA"
            )
        }
    }

    private init(certificatePath: String, keyPath: String, certificate: Certificate, key: Certificate.PrivateKey) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        self.certificate = certificate
        self.key = key
    }

    private static func load(certificatePath: String, keyPath: String) throws(TLSSetupError) -> CertificateAuthority {
        let certificate: Certificate
        let key: Certificate.PrivateKey
        do {
            certificate = try Certificate(pemEncoded: try String(contentsOfFile: certificatePath, encoding: .utf8))
        } catch {
            throw TLSSetupError("cannot read the CA certificate \(certificatePath): \(error)")
        }
        do {
            key = try Certificate.PrivateKey(pemEncoded: try String(contentsOfFile: keyPath, encoding: .utf8))
        } catch {
            throw TLSSetupError("cannot read the CA key \(keyPath): \(error)")
        }
        guard key.publicKey == certificate.publicKey else {
            throw TLSSetupError("the CA key \(keyPath) does not belong to the certificate \(certificatePath)")
        }
        return CertificateAuthority(
            certificatePath: certificatePath, keyPath: keyPath, certificate: certificate, key: key)
    }

    private static func create(directory: String, certificatePath: String, keyPath: String) throws(TLSSetupError)
        -> CertificateAuthority
    {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let now = Date()
        let certificate: Certificate
        let keyPEM: String
        let certificatePEM: String
        do {
            let name = try DistinguishedName {
                OrganizationName("Kakapo")
                CommonName("Kakapo local CA (\(ProcessInfo.processInfo.hostName))")
            }
            certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: key.publicKey,
                notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(10 * 365 * 86_400),
                issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(digitalSignature: true, keyCertSign: true, cRLSign: true))
                    SubjectKeyIdentifier(hash: key.publicKey)
                },
                issuerPrivateKey: key)
            keyPEM = try key.serializeAsPEM().pemString + "\n"
            certificatePEM = try certificate.serializeAsPEM().pemString + "\n"
        } catch {
            throw TLSSetupError("cannot make a CA certificate: \(error)")
        }
        let files = FileManager.default
        do {
            try files.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw TLSSetupError("cannot create the CA folder \(directory): \(error)")
        }
        try writePrivately(Array(keyPEM.utf8), to: keyPath)
        guard files.createFile(atPath: certificatePath, contents: Data(certificatePEM.utf8)) else {
            try? files.removeItem(atPath: keyPath)
            throw TLSSetupError("cannot write the CA certificate \(certificatePath)")
        }
        return CertificateAuthority(
            certificatePath: certificatePath, keyPath: keyPath, certificate: certificate, key: key)
    }

    /// Writes a private key to `path` so that no other user can ever read it: a new file created 0600
    /// (`O_CREAT | O_EXCL`, no link followed) beside it, written and flushed, then renamed into place. (A
    /// file created with the default mode and restricted afterwards, as Foundation's `createFile` does
    /// with attributes, is readable by others in between.)
    static func writePrivately(_ bytes: [UInt8], to path: String) throws(TLSSetupError) {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent).\(getpid()).tmp"
        ).path
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw TLSSetupError("cannot write the key \(path): \(String(cString: strerror(errno)))")
        }
        var written = 0
        var failure: String?
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0 {
                if errno == EINTR { continue }
                failure = String(cString: strerror(errno))
                break
            }
            written += count
        }
        if failure == nil && fsync(descriptor) != 0 { failure = String(cString: strerror(errno)) }
        close(descriptor)
        if failure == nil && rename(temporary, path) != 0 { failure = String(cString: strerror(errno)) }
        if let failure {
            unlink(temporary)
            throw TLSSetupError("cannot write the key \(path): \(failure)")
        }
    }

    /// A new TLS server context for `names` (host names or IP addresses), with a certificate this CA
    /// signs. Nothing is kept here: `InterceptionCertificates` keeps a bounded number of them.
    /// `applicationProtocols` are offered by ALPN, in order of preference (`["h2", "http/1.1"]` with HTTP/2).
    public func serverContext(for names: [String], applicationProtocols: [String] = ["http/1.1"]) throws(TLSSetupError)
        -> NIOSSLContext
    {
        let context: NIOSSLContext
        do {
            let leaf = try issue(for: names)
            let chain = try [leaf, certificate].map { certificate in
                NIOSSLCertificateSource.certificate(
                    try NIOSSLCertificate(bytes: Array(try certificate.serializeAsPEM().pemString.utf8), format: .pem))
            }
            let privateKey = try NIOSSLPrivateKey(
                bytes: Array(try Certificate.PrivateKey(leafKey).serializeAsPEM().pemString.utf8), format: .pem)
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain, privateKey: .privateKey(privateKey))
            configuration.applicationProtocols = applicationProtocols
            context = try NIOSSLContext(configuration: configuration)
        } catch let error as TLSSetupError {
            throw error
        } catch {
            throw TLSSetupError("cannot make a certificate for \(names.joined(separator: ", ")): \(error)")
        }
        return context
    }

    /// A leaf certificate for `names`, valid for a year (what clients accept for a server certificate).
    func issue(for names: [String]) throws -> Certificate {
        guard let first = names.first else { throw TLSSetupError("a certificate needs at least one name") }
        let alternativeNames = try names.map { name -> GeneralName in
            if let address = IPAddressBytes.parse(name) {
                return .ipAddress(ASN1OctetString(contentBytes: address[...]))
            }
            guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw TLSSetupError("\"\(name)\" is not a host name")
            }
            return .dnsName(name)
        }
        let now = Date()
        let leafPublicKey = Certificate.PublicKey(leafKey.publicKey)
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: leafPublicKey,
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(365 * 86_400),
            issuer: certificate.subject, subject: try DistinguishedName { CommonName(first) },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(alternativeNames)
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: certificate.publicKey).keyIdentifier)
            },
            issuerPrivateKey: key)
    }
}
