import Foundation
import KakapoEngine
import KakapoHTTP
import KakapoProxy
import KakapoTestSupport

/// What the served entry points share: starting a server and waiting until it listens, connecting to it,
/// and asking its pipeline for an answer, each from the fuzzer's own thread (which must wait).
enum FuzzServer {
    /// Starts `server` and returns its port once it listens.
    static func start(_ server: ProxyServer) -> Int {
        let done = DispatchSemaphore(value: 0)
        let box = PortBox()
        Task.detached {
            box.port = try? await server.start()
            done.signal()
        }
        done.wait()
        guard let port = box.port else { fatalError("a fuzz server does not listen") }
        return port
    }

    /// A connection to `port`. A refusal may be passing (the client's ports all in TIME_WAIT after tens of
    /// thousands of inputs, or the server pausing its accepts while out of descriptors), so it is tried
    /// for two seconds; a server that accepts nothing for that long is the finding.
    static func connect(_ port: Int) -> RawConnection {
        var lastError = ""
        for _ in 0..<40 {
            do {
                return try RawConnection(port: port, timeout: 2)
            } catch {
                lastError = "\(error)"
                usleep(50_000)
            }
        }
        fatalError("the server accepted no connection for two seconds: \(lastError)")
    }

    /// `server`'s answer to `request`, as a client on loopback gets it.
    static func answer(_ request: HTTP.Request, from server: ProxyServer) -> Answer {
        let done = DispatchSemaphore(value: 0)
        let box = AnswerBox()
        server.pipeline.handle(request, fromLoopback: true) { answer in
            box.answer = answer
            done.signal()
        }
        done.wait()
        return box.answer!
    }
}

/// Hands a value from a callback to the thread waiting on a semaphore (the semaphore orders the accesses).
private final class AnswerBox: @unchecked Sendable {
    var answer: Answer?
}

/// Hands the bound port from the starting task to the waiting thread (the semaphore orders the accesses).
private final class PortBox: @unchecked Sendable {
    var port: Int?
}
