/// Which requests the modes that record keep out of the cassette (`--record-only`, `--passthrough`).
public struct RecordFilter: Sendable {
    public init() {}
}
