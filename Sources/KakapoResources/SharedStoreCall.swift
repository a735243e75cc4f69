import Foundation
import KakapoHTTP
import KakapoJSON
import Synchronization

/// A call to the shared store that answers within a deadline: a database that went away makes the
/// request fail with 503 and a JSON reason after `timeout` seconds instead of hanging. The call itself
/// is left to finish or fail on its own.
package enum SharedStoreCall {
    struct Timeout: Error, CustomStringConvertible {
        let seconds: Double
        var description: String { "no answer from the database within \(JSONNumber(seconds)) s" }
    }

    private final class Once: Sendable {
        private let claimed = Atomic<Bool>(false)
        func claim() -> Bool { !claimed.exchange(true, ordering: .acquiringAndReleasing) }
    }

    package static func run<T: Sendable>(timeout: Double, _ operation: @escaping @Sendable () async throws -> T)
        async throws
        -> T
    {
        try await withCheckedThrowingContinuation { continuation in
            let once = Once()
            let sleeper = Task {
                try await Task.sleep(for: .seconds(timeout))
                if once.claim() { continuation.resume(throwing: Timeout(seconds: timeout)) }
            }
            Task {
                let result: Result<T, any Error>
                do {
                    result = .success(try await operation())
                } catch {
                    result = .failure(error)
                }
                if once.claim() {
                    sleeper.cancel()
                    continuation.resume(with: result)
                }
            }
        }
    }

    /// The answer when the database could not be used: 503 with the reason.
    package static func unavailable(_ error: any Error) -> HTTP.Response {
        .error("the shared store is unavailable: \(error)", status: 503)
    }
}
