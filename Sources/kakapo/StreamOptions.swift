import ArgumentParser
import Kakapo

/// Options of how event streams are replayed and recorded.
struct StreamOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "How recorded server-sent events are replayed: recorded (each after its recorded gap) or none (back to back).",
            valueName: "recorded|none"))
    var streamTiming: StreamTiming = .recorded

    /// Sets the stream options of `configuration`.
    func apply(to configuration: inout ProxyConfiguration) {
        configuration.streamTiming = streamTiming
    }
}

extension StreamTiming: ExpressibleByArgument {}
