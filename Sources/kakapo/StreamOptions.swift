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

    @Flag(
        inversion: .prefixedNo,
        help:
            "Record a stream the client leaves before its end (it closes the connection, or cancels its gRPC call) as the chunks that had come, marked \"abandoned\", to replay that far and then hold open; on by default. With --no-record-abandoned-streams such a stream is not recorded and the log says so."
    )
    var recordAbandonedStreams = true

    /// Sets the stream options of `configuration`.
    func apply(to configuration: inout ProxyConfiguration) {
        configuration.streamTiming = streamTiming
        configuration.recordsBrokenStreams = recordBrokenStreams
        configuration.recordsAbandonedStreams = recordAbandonedStreams
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
