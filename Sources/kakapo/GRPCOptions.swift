import ArgumentParser
import Kakapo
import KakapoGRPC

/// `--proto-descriptor FILE`: gRPC messages written to the cassette and matched as JSON.
struct GRPCOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A descriptor set (protoc --include_imports --descriptor_set_out=FILE) of the gRPC services recorded: their messages are written to the cassette as JSON (edit them there; the bytes are made from the JSON when it is loaded) and matched as JSON, --ignore-body-field pointers applying to each message.",
            valueName: "file"))
    var protoDescriptor: String?

    /// Reads the descriptor set before anything starts: one that cannot be read or parsed exits 3, naming it.
    func validate() throws {
        _ = try schema()
    }

    /// The descriptor set `--proto-descriptor` names; nil without the flag. Its errors print and exit 3.
    func schema() throws -> GRPCSchema? {
        guard let protoDescriptor else { return nil }
        do {
            return try GRPCSchema(contentsOfFile: protoDescriptor)
        } catch {
            throw ExitStatus.failure(error, context: "--proto-descriptor")
        }
    }

    /// Sets the matching's descriptor set (read again here: `validate()` checked that it reads).
    func apply(to configuration: inout ProxyConfiguration) {
        configuration.matching.grpcSchema = try? schema()
    }
}
