import KakapoEngine

extension RequestPipeline {
    /// A request target as the log may show it: credentials in its query redacted.
    func loggable(_ target: String) -> String { configuration.redactor.redact(target: target) }
}
