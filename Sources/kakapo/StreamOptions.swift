import ArgumentParser
import Kakapo

/// Options of how event streams are replayed and recorded.
struct StreamOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "How recorded streams (server-sent events, JSON lines) are replayed: recorded (each chunk after its recorded gap; the default), a speed such as 4x (four times as fast) or 0.5x (half as fast), from 0.01x to 1000x, or none (back to back).",
            valueName: "recorded|none|Nx"),
        transform: StreamOptions.timing)
    var streamTiming: StreamTiming = .recorded

    @Flag(
        help:
            "Record a stream of unknown length (events, JSON lines, a chunked body) that the upstream breaks off (a reset, a truncated chunked body) with the chunks that came, to replay as the same break; without it such a stream is not recorded."
    )
    var recordBrokenStreams = false

    /// Sets the stream options of `configuration`.
    func apply(to configuration: inout ProxyConfiguration) {
        configuration.streamTiming = streamTiming
        configuration.recordsBrokenStreams = recordBrokenStreams
    }
}

extension StreamOptions {
    /// The timing `--stream-timing text` names, or why it names none.
    static func timing(_ text: String) throws -> StreamTiming {
        guard let timing = StreamTiming(text) else {
            throw ValidationError(
                "--stream-timing takes recorded, none or a speed from \(StreamTiming.speeds.lowerBound)x to \(Int(StreamTiming.speeds.upperBound))x such as 4x or 0.5x, not \"\(text.prefix(64))\""
            )
        }
        return timing
    }
}
