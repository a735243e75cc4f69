import Foundation
import KakapoCassette
import KakapoEngine
import KakapoHTTP
import KakapoStreams
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The `URLProtocol` that hands requests to an `InProcessKakapo`. This class answers for the globally
/// enabled instance (`enable()`); each instance's sessions use a subclass of their own
/// (`KakapoURLProtocolSlot`), because Foundation shows a protocol only the request, not its session.
///
/// Foundation creates it and calls `startLoading` and `stopLoading` on its own threads; the answer is
/// delivered to Foundation's `client` from the pipeline's threads, and a streamed body being delivered is
/// held behind a lock so that `stopLoading` can give it up.
class KakapoURLProtocol: URLProtocol {
    private struct Instances {
        var bySlot: [Int: Engine] = [:]
        var global: Engine?
    }

    private static let instances = Mutex(Instances())
    private static let slots = Atomic<Int>(0)
    /// Whether loading stopped, and the streamed body being delivered, to give up when it does.
    private let work = Mutex<(stopped: Bool, body: StreamedBody?)>((false, nil))

    /// The instance number this class answers for; -1 for the global one.
    class var slot: Int { -1 }

    /// Registers `kakapo` and returns the protocol class its sessions use.
    static func register(_ kakapo: Engine) -> AnyClass {
        let slot = slots.wrappingAdd(1, ordering: .relaxed).oldValue
        instances.withLock { $0.bySlot[slot] = kakapo }
        return protocolClass(Slot0.self, remaining: slot)
    }

    static func unregister(slot: Int) { instances.withLock { $0.bySlot[slot] = nil } }

    /// `KakapoURLProtocolSlot<Next<...Next<Slot0>>>` with `remaining` levels: a distinct class per slot,
    /// made at run time.
    private static func protocolClass<S: ProtocolSlot>(_: S.Type, remaining: Int) -> AnyClass {
        remaining == 0 ? KakapoURLProtocolSlot<S>.self : protocolClass(NextSlot<S>.self, remaining: remaining - 1)
    }

    static func setGlobal(_ kakapo: Engine?, ifCurrent current: Engine? = nil) {
        instances.withLock { instances in
            if let current, instances.global !== current { return }
            instances.global = kakapo
        }
    }

    /// The instance that answers `request` for this class, if any.
    class func owner(of request: URLRequest) -> Engine? {
        guard let scheme = request.url?.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return nil
        }
        let slot = self.slot
        return instances.withLock { slot < 0 ? $0.global : $0.bySlot[slot] }
    }

    override class func canInit(with request: URLRequest) -> Bool { owner(of: request) != nil }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        let request = self.request
        guard let owner = type(of: self).owner(of: request), request.url != nil else {
            client?.urlProtocol(self, didFailWithError: URLError(.unsupportedURL))
            return
        }
        let converted: HTTP.Request
        do {
            converted = try HTTP.Request(request)
        } catch {
            client?.urlProtocol(self, didFailWithError: error)
            return
        }
        load(converted, as: request, owner: owner, redirects: 0)
    }

    /// Asks `owner` for the answer to `converted` (sent as `current`) and hands it to Foundation's client
    /// as it comes: a streamed body piece by piece, on the threads that deliver it (libcurl's, or
    /// Dispatch's for a recorded stream), never waiting on Swift's cooperative pool.
    private func load(_ converted: HTTP.Request, as current: URLRequest, owner: Engine, redirects: Int) {
        // URLProtocol is not Sendable; Foundation expects its client to be called from any thread.
        nonisolated(unsafe) let loader = self
        guard redirects < KakapoURLProtocol.maximumRedirects else {
            client?.urlProtocol(self, didFailWithError: URLError(.httpTooManyRedirects))
            return
        }
        owner.pipeline.answerStreaming(converted) { answer, body in
            guard let url = current.url, loader.keep(body) else {
                body?.cancel()
                return
            }
            #if !canImport(Darwin)
                // corelibs Foundation cannot take a redirect from a protocol (it traps), so the
                // redirect is followed here, as URLSession's default policy would.
                if let response = answer.response, let next = KakapoURLProtocol.redirect(response, from: current),
                    let nextRequest = try? HTTP.Request(next)
                {
                    body?.cancel()
                    loader.load(nextRequest, as: next, owner: owner, redirects: redirects + 1)
                    return
                }
            #endif
            guard let body else {
                loader.deliverWhole(answer, for: url, request: current)
                return
            }
            if answer.response?.headers["Content-Encoding"] != nil {
                // A compressed stream is decompressed whole, as a socket client's URLSession would: a
                // recorded one is whole already (or fails as recorded, when it broke off), a live one is
                // collected.
                guard body.isLive else {
                    body.cancel()
                    if answer.breaksOff {
                        loader.client?.urlProtocol(loader, didFailWithError: URLError(.networkConnectionLost))
                    } else {
                        loader.deliverWhole(answer, for: url, request: current)
                    }
                    return
                }
                body.collect { bytes, broken in
                    guard !broken else {
                        loader.client?.urlProtocol(loader, didFailWithError: URLError(.networkConnectionLost))
                        return
                    }
                    var whole = answer
                    if case .response(let status, let headers, _) = answer.outcome {
                        whole.outcome = .response(status: status, headers: headers, body: .bytes(bytes))
                    }
                    loader.deliverWhole(whole, for: url, request: current)
                }
                return
            }
            guard loader.deliverHead(answer, response: answer.response, for: url, request: current) else {
                body.cancel()
                return
            }
            body.deliver { event in
                switch event {
                case .data(let bytes): loader.client?.urlProtocol(loader, didLoad: Data(bytes))
                case .end: loader.client?.urlProtocolDidFinishLoading(loader)
                case .broken: loader.client?.urlProtocol(loader, didFailWithError: URLError(.networkConnectionLost))
                }
            }
        }
    }

    /// Keeps `body` to give up if loading stops; false when it already stopped.
    private func keep(_ body: StreamedBody?) -> Bool {
        work.withLock { state in
            guard !state.stopped else { return false }
            state.body = body
            return true
        }
    }

    /// Hands the task a whole answer: head, body, end.
    private func deliverWhole(_ answer: Answer, for url: URL, request: URLRequest) {
        let response = answer.response.map(KakapoURLProtocol.decoded)
        guard deliverHead(answer, response: response, for: url, request: request), let response else { return }
        if !response.body.isEmpty { client?.urlProtocol(self, didLoad: Data(response.body)) }
        client?.urlProtocolDidFinishLoading(self)
    }

    static let maximumRedirects = 16

    /// The request a redirect leads to, or nil when `response` is not one: 303, and 301 or 302 after a
    /// POST, become a GET without a body, as browsers and URLSession do.
    static func redirect(_ response: HTTP.Response, from request: URLRequest) -> URLRequest? {
        guard (300..<400).contains(response.status), response.status != 304, let base = request.url,
            let location = response.headers["Location"], let target = URL(string: location, relativeTo: base)
        else { return nil }
        var redirected = request
        redirected.url = target.absoluteURL
        let post = request.httpMethod?.uppercased() == "POST"
        if response.status == 303 || ((response.status == 301 || response.status == 302) && post) {
            redirected.httpMethod = "GET"
            redirected.httpBody = nil
            redirected.httpBodyStream = nil
        }
        return redirected
    }

    override func stopLoading() {
        let body = work.withLock { state -> StreamedBody? in
            state.stopped = true
            return state.body
        }
        body?.cancel()
    }

    /// The response as the task gets it: a compressed body decompressed (and its encoding and length
    /// dropped), as URLSession does for a client over a socket.
    static func decoded(_ response: HTTP.Response) -> HTTP.Response {
        var response = response
        let (content, coding) = ContentCoding.decoding(response.body, headers: response.headers)
        if coding != nil {
            response.body = content
            response.headers.remove(name: "Content-Encoding")
            response.headers.remove(name: "Content-Length")
        }
        return response
    }

    /// Hands the task the answer's head, `response` (or its failure, or a redirect); true when the body
    /// is to follow.
    private func deliverHead(_ answer: Answer, response: HTTP.Response?, for url: URL, request: URLRequest) -> Bool {
        guard let client else { return false }
        if let failure = answer.urlError {
            client.urlProtocol(self, didFailWithError: failure)
            return false
        }
        guard let response else {
            client.urlProtocol(self, didFailWithError: URLError(.badServerResponse))
            return false
        }
        var headers: [String: String] = [:]
        for field in HopByHopHeaders.removing(from: response.headers) {
            if let existing = headers[field.name] {
                headers[field.name] = existing + ", " + field.value
            } else {
                headers[field.name] = field.value
            }
        }
        headers["X-Kakapo-Source"] = answer.source.rawValue
        guard
            let httpResponse = HTTPURLResponse(
                url: url, statusCode: response.status, httpVersion: "HTTP/1.1", headerFields: headers)
        else {
            client.urlProtocol(self, didFailWithError: URLError(.badServerResponse))
            return false
        }
        #if canImport(Darwin)
            if let redirected = KakapoURLProtocol.redirect(response, from: request) {
                // URLSession applies its own redirect policy (and the delegate's) from here.
                client.urlProtocol(self, wasRedirectedTo: redirected, redirectResponse: httpResponse)
                return false
            }
        #endif
        client.urlProtocol(self, didReceive: httpResponse, cacheStoragePolicy: .notAllowed)
        return true
    }
}

/// The protocol class of one `InProcessKakapo`'s sessions.
final class KakapoURLProtocolSlot<Slot: ProtocolSlot>: KakapoURLProtocol {
    override class var slot: Int { Slot.index }
}

/// A type-level number, so each instance can have a protocol class of its own.
protocol ProtocolSlot { static var index: Int { get } }
enum Slot0: ProtocolSlot { static var index: Int { 0 } }
enum NextSlot<Previous: ProtocolSlot>: ProtocolSlot { static var index: Int { Previous.index + 1 } }
