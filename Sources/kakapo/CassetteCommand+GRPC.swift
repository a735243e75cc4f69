import Kakapo
import KakapoGRPC

/// How `kakapo cassette show` prints a gRPC call.
extension CassetteCommand.Show {
    /// `grpc 1 -> 3 messages, status 0 (OK)`: the messages each way and how the call ended (`status 5
    /// (NOT_FOUND) "no such user"`); nil for an interaction that is not a gRPC call.
    static func grpcLabel(of interaction: Interaction) -> String? {
        guard GRPC.isGRPC(interaction.request) else { return nil }
        let sent = (try? GRPC.messages(in: interaction.request.body)).map { String($0.count) } ?? "?"
        let answered = (try? GRPC.messages(in: interaction.response.body)).map { String($0.count) } ?? "?"
        var label = "grpc \(sent) -> \(answered) message\(answered == "1" ? "" : "s")"
        if let status = GRPC.status(of: interaction.response) {
            label += ", status \(status)"
            if let message = GRPC.statusMessage(of: interaction.response), !message.isEmpty {
                label += " \"\(message.prefix(60))\(message.count > 60 ? "…" : "")\""
            }
        } else {
            label += interaction.abandoned ? ", abandoned by the client (no status)" : ", no status"
        }
        return label
    }

    /// One line per message of a gRPC call: `->` the client's, `<- 50.5 ms` the server's with its offset,
    /// then the message as compact JSON with a descriptor set, else its size (`<12 bytes>`); cut to 100
    /// characters. Empty for an interaction that is not a gRPC call.
    static func grpcLines(of interaction: Interaction, schema: GRPCSchema?) -> [String] {
        guard GRPC.isGRPC(interaction.request) else { return [] }
        let path = interaction.request.path
        func line(_ message: GRPCMessage, side: GRPCSchema.Side) -> String {
            let shown =
                schema?.json(of: message, path: path, side: side).map {
                    String(decoding: JSONWriter().write($0), as: UTF8.self)
                } ?? "<\(message.bytes.count) bytes\(message.compressed ? ", compressed" : "")>"
            return shown.count > 100 ? String(shown.prefix(99)) + "…" : shown
        }
        var lines = ((try? GRPC.messages(in: interaction.request.body)) ?? []).map { "-> " + line($0, side: .request) }
        let answers = (try? GRPC.messages(in: interaction.response.body)) ?? []
        let offsets = interaction.chunks.map { $0.map(\.offsetMilliseconds) }
        for (index, message) in answers.enumerated() {
            let offset = offsets.flatMap { $0.indices.contains(index) ? $0[index] : nil }
            let time = offset.map { " " + formatted($0) + " ms" } ?? ""
            lines.append("<-" + time + " " + line(message, side: .response))
        }
        return lines
    }

    /// A tenth of a millisecond at most, as a cassette stores offsets; never traps.
    private static func formatted(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 1e15 else { return "?" }
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
