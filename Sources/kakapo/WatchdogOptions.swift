import ArgumentParser
import Kakapo

/// Options that keep a stuck request from going unsaid.
struct WatchdogOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Log one warning for a request in flight this many seconds with no bytes either way, saying what it waits for (the client's body, the upstream, the client reading); 0 turns it off.",
            valueName: "seconds"))
    var slowWarning: Double = 10

    /// The longest `--slow-warning`: a day.
    static let longest = 86_400.0

    func validate() throws {
        guard slowWarning.isFinite, slowWarning >= 0, slowWarning <= Self.longest else {
            throw ValidationError(
                "--slow-warning must be from 0 (off) to \(Int(Self.longest)) seconds, not \(slowWarning)")
        }
    }

    /// Sets the watchdog options of `configuration`.
    func apply(to configuration: inout ProxyConfiguration) {
        configuration.slowWarning = slowWarning
    }
}
