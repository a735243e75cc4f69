import Foundation
import KakapoProxy
import NIOCore
import NIOSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads the errors NIOSSL and NIO raise on a decrypted connection as a `TLSCloseReason`: the client's
/// alert when it refused Kakapo's certificate, nothing alarming for ordinary closes, and BoringSSL's
/// short reason (never its error stack with source paths) for the rest.
enum TLSCloseClassifier {
    /// The alerts a client sends when it does not trust the certificate, by BoringSSL's reason name.
    static let trustAlerts: [String: String] = [
        "TLSV1_ALERT_UNKNOWN_CA": "unknown_ca",
        "SSLV3_ALERT_BAD_CERTIFICATE": "bad_certificate",
        "SSLV3_ALERT_CERTIFICATE_UNKNOWN": "certificate_unknown",
    ]

    static func reason(for error: any Error) -> TLSCloseReason {
        switch error {
        case let error as NIOSSLError:
            return reason(for: error)
        case is NIOSSLCloseTimedOutError:
            return .ordinary("the client did not answer close_notify")
        case let error as ChannelError where error == .eof || error == .ioOnClosedChannel || error == .alreadyClosed:
            return .ordinary("\(error)")
        case let error as IOError where [ECONNRESET, EPIPE, ECONNABORTED].contains(error.errnoCode):
            return .ordinary("connection reset by the client")
        default:
            return .failed("\(error)")
        }
    }

    private static func reason(for error: NIOSSLError) -> TLSCloseReason {
        switch error {
        case .uncleanShutdown:
            return .ordinary("the client closed without close_notify")
        case .handshakeFailed(let failure), .shutdownFailed(let failure):
            let reasons = reasonNames(failure)
            if let alert = reasons.lazy.compactMap({ trustAlerts[$0] }).first {
                return .untrusted(alert: alert)
            }
            // Under TLS 1.3 an OpenSSL client (curl among them) that rejects the certificate sends its
            // alert in clear text while the server expects encrypted records: the server sees a record too
            // short to decrypt instead of the alert.
            if case .handshakeFailed = error,
                reasons.contains("BAD_PACKET_LENGTH")
                    || reasons.contains("DECRYPTION_FAILED_OR_BAD_RECORD_MAC")
            {
                return .untrusted(alert: nil)
            }
            if reasons.isEmpty || reasons.contains("EOF during handshake") {
                return .ordinary("the client closed during the TLS handshake")
            }
            let verb = if case .handshakeFailed = error { "TLS handshake failed" } else { "TLS shutdown failed" }
            return .failed("\(verb): \(reasons.map { $0.lowercased() }.joined(separator: ", "))")
        default:
            return .failed("TLS error: \(error)")
        }
    }

    /// BoringSSL's reason names in an error stack (`TLSV1_ALERT_UNKNOWN_CA`), without the codes, the
    /// library and function names and the source path each entry also carries.
    static func reasonNames(_ failure: BoringSSLError) -> [String] {
        let stack: NIOBoringSSLErrorStack
        switch failure {
        case .sslError(let errors), .unknownError(let errors), .invalidSNIName(let errors),
            .failedToSetALPN(let errors):
            stack = errors
        case .zeroReturn, .syscallError:
            return []
        default:
            return ["\(failure)"]
        }
        return stack.prefix(8).map { reasonName(String(describing: $0)) }
    }

    /// `Error: 268436552 error:10000418:SSL routines:OPENSSL_internal:TLSV1_ALERT_UNKNOWN_CA at /p/x.cc:592`
    /// becomes `TLSV1_ALERT_UNKNOWN_CA`; a description of another shape is kept without its prefix.
    static func reasonName(_ description: String) -> String {
        let bounded = description.prefix(1024)
        guard let start = bounded.range(of: "error:") else {
            return String(bounded.hasPrefix("Error: ") ? bounded.dropFirst(7) : bounded)
                .trimmingCharacters(in: .whitespaces)
        }
        var entry = bounded[start.upperBound...]
        if let at = entry.range(of: " at ") { entry = entry[..<at.lowerBound] }
        return String(entry.split(separator: ":").last ?? entry)
    }
}
