/// Why a decrypted connection ended with an error, as `TLSTermination.closeReason(for:)` reads it: what
/// the log says about it, in one line without the TLS library's internals.
public enum TLSCloseReason: Sendable, Equatable {
    /// The way connections end: end of file, `close_notify`, a reset, an unclean shutdown. Logged at
    /// debug at most.
    case ordinary(String)
    /// The client refused Kakapo's certificate during the handshake, with this TLS alert (`unknown_ca`,
    /// `bad_certificate` or `certificate_unknown`): it does not trust Kakapo's CA. The alert is nil when
    /// it could not be read (a TLS 1.3 OpenSSL client, curl among them, sends it unencrypted).
    case untrusted(alert: String?)
    /// Any other failure, in a short line (a TLS reason such as `wrong_version_number`, or the error).
    case failed(String)
}
