/// The kind of a `KakapoError`, by a name that stays the same across releases: what programs compare,
/// what the CLI maps to an exit code, what error bodies carry in `"code"`.
///
/// One vocabulary for every module, in the manner of `URLError.Code`: the kinds of failure a file can have
/// are spelled here once, and a module with kinds of its own adds them in an extension (the upstream client
/// adds `timeout`, `dnsFailure` and the rest).
public struct ErrorCode: Hashable, Sendable, CustomStringConvertible {
    /// The stable name: `unreadable`, `port-in-use`.
    public let name: String

    public init(name: String) {
        self.name = name
    }

    public var description: String { name }

    /// A file could not be read (missing, unreadable).
    public static let unreadable = ErrorCode(name: "unreadable")
    /// A file is not valid JSON or YAML.
    public static let syntax = ErrorCode(name: "syntax")
    /// A file parses but is not what this version understands (a value of the wrong type, a missing key).
    public static let invalid = ErrorCode(name: "invalid")
    /// A file could not be written.
    public static let notWritable = ErrorCode(name: "notWritable")
    /// Another writer holds a file's lock.
    public static let locked = ErrorCode(name: "locked")
    /// A configuration that is inconsistent (a mode that needs an upstream has none, and so on).
    public static let configuration = ErrorCode(name: "configuration")
    /// An address that could not be listened on, for a reason other than its port being taken.
    public static let bind = ErrorCode(name: "bind")
    /// The port to listen on is taken by another process.
    public static let portInUse = ErrorCode(name: "port-in-use")
    /// What was asked for does not exist (a Store entity by its id).
    public static let notFound = ErrorCode(name: "not-found")
    /// What was to be added is there already (an entity with that id, a route for that pattern).
    public static let conflict = ErrorCode(name: "conflict")
}
