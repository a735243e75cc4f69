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
            label += ", no status"
        }
        return label
    }
}
