import Foundation
import KakapoHTTP

/// Threads that each own one libcurl handle and take requests from a shared queue, so blocking libcurl
/// calls never run on an event loop or the cooperative pool. Threads start on demand up to `maximum`
/// and live until `shutdown()`.
final class CurlWorkerPool: @unchecked Sendable {
    // @unchecked Sendable: `jobs`, `threads`, `idle` and `stopped` are only touched with `condition` locked.
    struct Job {
        let request: HTTPRequest
        let url: String
        /// Whether a streamed answer's body is kept for the completion.
        var keepsStreamedBody = true
        /// Told about a streamed answer as it arrives; nil buffers every answer.
        var onStream: (@Sendable (UpstreamStreamEvent) -> StreamDisposition)? = nil
        let completion: @Sendable (Result<HTTPResponse, UpstreamError>) -> Void
    }

    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var jobsHead = 0
    private var threads = 0
    private var idle = 0
    private var stopped = false
    private let maximum: Int
    private let configuration: UpstreamConfiguration
    private let caBundle: [UInt8]?

    init(configuration: UpstreamConfiguration, caBundle: [UInt8]?) {
        self.configuration = configuration
        self.caBundle = caBundle
        self.maximum = max(1, configuration.maximumConcurrentRequests)
    }

    func submit(_ job: Job) {
        condition.lock()
        if stopped {
            condition.unlock()
            job.completion(.failure(UpstreamError(code: .other, message: "the upstream client is shut down")))
            return
        }
        jobs.append(job)
        let pending = jobs.count - jobsHead
        let spawn = pending > idle && threads < maximum
        if spawn { threads += 1 }
        condition.signal()
        condition.unlock()
        if spawn {
            let thread = Thread { [self] in run() }
            thread.name = "kakapo-upstream"
            thread.start()
        }
    }

    private func run() {
        let handle = CurlHandle()
        condition.lock()
        while true {
            while jobsHead == jobs.count && !stopped {
                idle += 1
                condition.wait()
                idle -= 1
            }
            if jobsHead == jobs.count && stopped { break }
            let job = jobs[jobsHead]
            jobsHead += 1
            if jobsHead > 1024 && jobsHead * 2 > jobs.count {
                jobs.removeFirst(jobsHead)
                jobsHead = 0
            }
            condition.unlock()
            let result: Result<HTTPResponse, UpstreamError>
            if let handle {
                result = handle.perform(
                    job.request, url: job.url, configuration: configuration, caBundle: caBundle,
                    keepsStreamedBody: job.keepsStreamedBody, onStream: job.onStream)
            } else {
                result = .failure(UpstreamError(code: .other, message: "libcurl could not create a handle"))
            }
            job.completion(result)
            condition.lock()
        }
        threads -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Lets queued jobs finish, then stops every thread.
    func shutdown() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while threads > 0 { condition.wait() }
        condition.unlock()
    }
}
