/// What the proxy does with a request, by whether the cassette has it (design 5.2, the VCR vocabulary).
///
/// The raw values are the names the command line, `KAKAPO_RECORD` and the session API use; replay-only is
/// `none` there, as in VCR, and `.replay` in Swift, where `.none` would mean `Optional.none`.
public enum ProxyMode: String, Sendable, CaseIterable {
    /// Replay only: a hit replays, a miss is a miss. Never touches the network. Spelled `none` on the
    /// command line, in `KAKAPO_RECORD` and in the session API.
    case replay = "none"
    /// A hit replays; a miss is forwarded upstream, recorded and answered.
    case new
    /// Everything is forwarded and recorded, replacing earlier recordings of the same request.
    case all
    /// Everything is forwarded; nothing is recorded.
    case passthrough
    /// VCR's default: when the cassette exists, replay only (a miss stays a miss and the file never
    /// changes); when it does not, record everything. Decided once, when the server starts.
    case once

    /// True when this mode answers from the cassette (`once` is resolved to `replay` or `new` before serving).
    public var replays: Bool { self == .replay || self == .new }
    /// True when this mode may forward requests upstream.
    public var usesUpstream: Bool { self != .replay }
    /// True when this mode writes the cassette (`once` may; it is resolved before serving).
    public var records: Bool { self == .new || self == .all || self == .once }

    /// The mode a server runs in for the cassette at `path`: `once` becomes `replay` when the file exists
    /// and `new` when it does not; every other mode stays as it is.
    public func resolved(cassetteExists: Bool) -> ProxyMode {
        self == .once ? (cassetteExists ? .replay : .new) : self
    }

    /// Why this mode cannot run with what it is given, or nil when it can: the one check of modes, for the
    /// server, for cassette sessions and for the command line. `cassette` names the cassette (nil: none),
    /// `cassetteExists` says whether its file exists (it decides what `once` does).
    public func problem(cassette: String?, cassetteExists: Bool, hasUpstream: Bool) -> String? {
        if self == .once && cassette == nil { return "mode 'once' needs a cassette (--cassette FILE)" }
        let resolved = resolved(cassetteExists: cassetteExists)
        if resolved.usesUpstream && !hasUpstream {
            if self == .once, let cassette {
                return
                    "mode 'once' records because \(cassette) does not exist yet, so it needs an upstream (--upstream URL)"
            }
            return "mode '\(rawValue)' needs --upstream URL (or --proxy): it forwards requests upstream"
        }
        if resolved.records && cassette == nil {
            return "mode '\(rawValue)' records, so it needs a cassette (--cassette FILE)"
        }
        return nil
    }

    /// The old name of `.replay`. Where a `ProxyMode?` is expected, `.none` is `Optional.none` ("no mode
    /// given"), which let `KAKAPO_RECORD` decide and could record: use `.replay`.
    @available(
        *, deprecated, renamed: "replay", message: "use .replay: where a ProxyMode? is expected, .none means nil"
    )
    public static var none: ProxyMode { .replay }
}
