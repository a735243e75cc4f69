import Logging

extension TLSCloseReason {
    /// Logs why a decrypted connection for `origin` ended with `error`: a client that refused Kakapo's
    /// certificate in one line that says what to do, an ordinary close at debug, another failure at info.
    static func log(_ error: any Error, on origin: String, tls: ServerTLS, logger: Logger) {
        switch tls.interception?.closeReason(for: error) ?? .failed("\(error)") {
        case .untrusted(let alert):
            let told = alert.map { " (TLS alert \($0))" } ?? ""
            logger.info(
                "connection for \(origin) closed: curl or the browser did not trust Kakapo's CA\(told): run `kakapo ca trust`"
            )
        case .ordinary(let reason):
            logger.debug("connection for \(origin) closed: \(reason)")
        case .failed(let reason):
            logger.info("connection for \(origin) closed: \(reason)")
        }
    }
}
