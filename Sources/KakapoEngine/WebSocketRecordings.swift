import KakapoCassette
import Synchronization

/// The WebSocket conversations being recorded right now, so that Kakapo stopping records each one (what
/// was said so far) before its cassette closes, rather than losing it with the connections.
package enum WebSocketRecordings {
    private struct Entry {
        var session: ObjectIdentifier
        var finish: @Sendable () -> Void
    }

    private static let open = Mutex<(next: Int, entries: [Int: Entry])>((0, [:]))

    /// Registers a conversation recording into `session`; `finish` ends its recording and returns once it
    /// is handed to the session. Returns the token for `unregister`.
    package static func register(into session: CassetteSession, finish: @escaping @Sendable () -> Void) -> Int {
        open.withLock { state in
            state.next += 1
            state.entries[state.next] = Entry(session: ObjectIdentifier(session), finish: finish)
            return state.next
        }
    }

    /// Forgets a recording that ended by itself.
    package static func unregister(_ token: Int) {
        _ = open.withLock { $0.entries.removeValue(forKey: token) }
    }

    /// Ends every recording into `session`, before it closes. Blocks until each is handed over: call it off
    /// the event loops (as `Engine.shutdown` does).
    package static func finishAll(recordingInto session: CassetteSession) {
        let identifier = ObjectIdentifier(session)
        let finishing = open.withLock { state -> [Entry] in
            let matching = state.entries.filter { $0.value.session == identifier }
            for key in matching.keys { state.entries.removeValue(forKey: key) }
            return Array(matching.values)
        }
        for entry in finishing { entry.finish() }
    }
}
