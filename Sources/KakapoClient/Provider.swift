import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A networking client for the endpoints `E`: builds each request, passes it through the middleware,
/// answers it from the network, a stub or Kakapo in process, validates the status, and returns the
/// response or throws one `ClientError`.
///
/// ```swift
/// let client = Provider<DemoAPI>(middleware: [AccessTokenMiddleware { _ in token }])
/// let user: User = try await client.request(.user(id: "1")).decode()
/// ```
public final class Provider<E: Endpoint>: Sendable {
    public let session: URLSession
    public let stubBehavior: StubBehavior
    public let middleware: [any Middleware]
    /// When true, identical requests in flight at the same time share one network call (a caller that is
    /// cancelled while others still wait gets its cancellation when the shared call ends).
    public let trackInProgress: Bool
    /// Shared calls in flight and how many callers wait for each.
    private let inFlight = Mutex<[RequestKey: (task: Task<Result<ClientResponse, ClientError>, Never>, waiting: Int)]>(
        [:])

    public init(
        session: URLSession = .shared, stubBehavior: StubBehavior = .never, middleware: [any Middleware] = [],
        trackInProgress: Bool = false
    ) {
        self.session = session
        self.stubBehavior = stubBehavior
        self.middleware = middleware
        self.trackInProgress = trackInProgress
    }

    /// Sends the request for `endpoint`. Cancelling the calling task cancels the request; middleware
    /// still sees the result (`ClientError.underlying(CancellationError(), nil)`).
    public func request(_ endpoint: E) async throws(ClientError) -> ClientResponse {
        var request = try endpoint.urlRequest()
        for step in middleware { request = step.prepare(request, endpoint: endpoint) }
        for step in middleware { step.willSend(request, endpoint: endpoint) }
        var result = await perform(request, endpoint: endpoint)
        if case .success(let response) = result, !endpoint.validation.accepts(response.statusCode) {
            result = .failure(.statusCode(response))
        }
        for step in middleware { step.didReceive(result, endpoint: endpoint) }
        for step in middleware { result = step.process(result, endpoint: endpoint) }
        return try result.get()
    }

    private func perform(_ request: URLRequest, endpoint: E) async -> Result<ClientResponse, ClientError> {
        guard trackInProgress else { return await send(request, endpoint: endpoint) }
        let key = RequestKey(request)
        let task = inFlight.withLock { calls in
            if let running = calls[key] {
                calls[key]!.waiting += 1
                return running.task
            }
            let created = Task { await self.send(request, endpoint: endpoint) }
            calls[key] = (created, 1)
            return created
        }
        let result = await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            // The shared call is cancelled when the last caller waiting for it is.
            let abandoned = inFlight.withLock { calls -> Bool in
                guard calls[key]?.task == task else { return false }
                calls[key]!.waiting -= 1
                return calls[key]!.waiting == 0
            }
            if abandoned { task.cancel() }
        }
        inFlight.withLock { calls in
            if calls[key]?.task == task { calls[key] = nil }
        }
        if Task.isCancelled { return .failure(.underlying(CancellationError(), nil)) }
        return result
    }

    private func send(_ request: URLRequest, endpoint: E) async -> Result<ClientResponse, ClientError> {
        switch stubBehavior {
        case .never:
            return await load(request, through: session)
        case .session(let other):
            return await load(request, through: other)
        case .immediate:
            return .success(sample(request, endpoint))
        case .delayed(let delay):
            do {
                try await Task.sleep(for: delay)
            } catch {
                return .failure(.underlying(CancellationError(), nil))
            }
            return .success(sample(request, endpoint))
        case .error(let error):
            return .failure(.underlying(error, nil))
        }
    }

    private func load(_ request: URLRequest, through session: URLSession) async -> Result<ClientResponse, ClientError> {
        do {
            let (data, response) = try await session.data(for: request)
            let http = response as? HTTPURLResponse
            return .success(
                ClientResponse(statusCode: http?.statusCode ?? 0, data: data, request: request, response: http))
        } catch {
            if Task.isCancelled || (error as? URLError)?.code == .cancelled {
                return .failure(.underlying(CancellationError(), nil))
            }
            return .failure(.underlying(error, nil))
        }
    }

    private func sample(_ request: URLRequest, _ endpoint: E) -> ClientResponse {
        let http = request.url.flatMap {
            HTTPURLResponse(url: $0, statusCode: endpoint.sampleStatus, httpVersion: "HTTP/1.1", headerFields: [:])
        }
        return ClientResponse(
            statusCode: endpoint.sampleStatus, data: endpoint.sampleData, request: request, response: http)
    }
}

/// What makes two requests the same for sharing one call: method, URL, headers and body.
struct RequestKey: Hashable, Sendable {
    let method: String
    let url: String
    let headers: [String: String]
    let body: Data?

    init(_ request: URLRequest) {
        method = request.httpMethod ?? "GET"
        url = request.url?.absoluteString ?? ""
        headers = request.allHTTPHeaderFields ?? [:]
        body = request.httpBody
    }
}
