import Foundation
import KakapoClient
import KakapoURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension StubBehavior {
    /// Answers from Kakapo in process: its routes, Store resources and cassette, with no socket.
    public static func kakapo(_ kakapo: InProcessKakapo) -> StubBehavior {
        .session(URLSession(configuration: kakapo.sessionConfiguration()))
    }
}
