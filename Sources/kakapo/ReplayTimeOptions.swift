import ArgumentParser
import Kakapo

/// Options of how replays move the recording's times to now.
struct ReplayTimeOptions: ParsableArguments {
    @Flag(
        help:
            "Replay recorded times as they were recorded. By default Date is now, and Expires, Last-Modified, a Retry-After date and a Set-Cookie's Expires keep their distance from the recorded Date but from now (Max-Age stays as it is)."
    )
    var keepTime = false

    @Option(
        name: .customLong("shift-time-json"),
        help: ArgumentHelp(
            "A JSON pointer (such as /token/expiresAt, * for every member or element: /items/*/createdAt) whose ISO 8601 time or epoch seconds or milliseconds in a replayed body moves with the clock too (repeatable).",
            valueName: "pointer"))
    var shiftTimeJSON: [String] = []

    func validate() throws {
        try validatePointers(shiftTimeJSON, flag: "--shift-time-json")
        if keepTime && !shiftTimeJSON.isEmpty {
            throw ValidationError("--keep-time replays every time as recorded: it cannot go with --shift-time-json")
        }
    }

    /// Sets how `configuration` moves replayed times.
    func apply(to configuration: inout ProxyConfiguration) {
        configuration.replayTime = ReplayTime(
            keepsTime: keepTime, jsonPointers: shiftTimeJSON.compactMap(JSONPointer.init))
    }
}
