import KakapoCassette
import Logging

extension CassetteSession {
    /// The cassette at `path` opened for a run in `mode` (resolved, not `once`): read (it must exist when
    /// the mode only replays, unless `allowingMissing`: a session replaying a file that does not exist), checked writable when the mode records, its save errors logged. The one
    /// way the server and cassette sessions open a cassette.
    static func opened(
        at path: String, mode: ProxyMode, redactor: Redactor, matching: MatchOptions,
        repeatPolicy: InteractionIndex.RepeatPolicy, logger: Logger, allowingMissing: Bool = false
    ) throws(CassetteError) -> CassetteSession {
        // gRPC messages written as JSON are read with the descriptor set the matching carries.
        let schema = matching.grpcSchema
        let cassette =
            mode == .replay && !allowingMissing
            ? try CassetteFile.load(path, schema: schema) : try CassetteFile.loadIfPresent(path, schema: schema)
        if mode.records { try CassetteFile.checkWritable(path) }
        return CassetteSession(
            path: path, cassette: cassette, redactor: redactor, matching: matching, repeatPolicy: repeatPolicy,
            onSaveError: { error in logger.error("cannot save the cassette: \(error)") })
    }
}
