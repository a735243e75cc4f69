/// A cassette: the ordered list of recorded interactions of one file (design section 5.1).
public struct Cassette: Hashable, Sendable {
    /// The format version this build writes; files with a newer version are refused.
    public static let currentVersion = 1

    public var version: Int
    public var interactions: [Interaction]

    public init(version: Int = Cassette.currentVersion, interactions: [Interaction] = []) {
        self.version = version
        self.interactions = interactions
    }
}
