import KakapoHTTP

/// What a route's WebSocket script does for one event (the opening, or a client message a rule takes):
/// messages sent in order, each after its own delay, then perhaps a close.
///
/// ```yaml
/// send: [{text: see you}]
/// close: {code: 1000, reason: done, delay: 100ms}
/// ```
struct WebSocketScriptReply: Sendable {
    /// The close that ends the conversation: a code a close frame may carry, a reason of at most 123 bytes
    /// (what fits in a control frame beside the code), and a delay counted from the last message.
    struct Close: Sendable {
        /// The close code: 1000 unless the script says.
        let code: Int
        /// The close reason, at most `WebSocketClose.largestReasonBytes`; empty for none.
        let reason: String
        /// How long after the last message the close goes.
        let delay: Latency?

        /// The members a `close:` may have.
        static let keys = ["code", "reason", "delay"]

        /// Reads a `close:`, refusing codes no close frame may carry and reasons too long for one.
        init(_ node: DefinitionNode) throws(RoutesError) {
            let object = try node.object(allowed: Close.keys)
            if let node = object["code"] {
                let problem = "a close code: 1000-1003, 1007-1014 or 3000-4999 (RFC 6455 7.4)"
                let code = try node.integer(in: WebSocketClose.codes, problem)
                // 1016-2999 are reserved for future versions of the protocol: clients fail on them.
                guard WebSocketClose.isSendable(code), !(1016...2999).contains(code) else {
                    throw node.error("expected \(problem)")
                }
                self.code = code
            } else {
                code = 1000
            }
            reason = try object["reason"]?.string() ?? ""
            guard reason.utf8.count <= WebSocketClose.largestReasonBytes else {
                throw object["reason"]!.error(
                    "a close reason is at most \(WebSocketClose.largestReasonBytes) bytes of UTF-8 (it has \(reason.utf8.count))"
                )
            }
            delay = try object["delay"].map { (node) throws(RoutesError) in try Latency(node) }
        }
    }

    /// The messages sent, in order.
    let messages: [WebSocketScriptMessage]
    /// The close that follows them; nil to stay open.
    let close: Close?

    /// Reads `send` (a list of messages, or one) and `close` of a script or a rule.
    init(send: DefinitionNode?, close: DefinitionNode?, scope: TemplateScope) throws(RoutesError) {
        var messages: [WebSocketScriptMessage] = []
        if let send {
            let items = if case .array = send.value { try send.array() } else { [send] }
            for item in items { messages.append(try WebSocketScriptMessage(item, scope: scope)) }
        }
        self.messages = messages
        self.close = try close.map { (node) throws(RoutesError) in try Close(node) }
    }

    /// The steps for one event, each message's delay added to those before it, so `delay` reads as "wait,
    /// then send" down the list. When the messages would be longer than `limit` bytes in all (templates
    /// repeating a long client message), the one step `.tooLarge(limit:)` instead: nothing of them is sent.
    func steps(_ context: TemplateContext, limit: Int) -> [WebSocketScriptStep] {
        var steps: [WebSocketScriptStep] = []
        steps.reserveCapacity(messages.count + 1)
        var after = Duration.zero
        var left = limit
        for message in messages {
            after += message.delay?.sample() ?? .zero
            guard let payload = message.render(context, limit: left) else { return [.tooLarge(limit: limit)] }
            switch payload {
            case .text(let text): left -= text.utf8.count
            case .binary(let bytes): left -= bytes.count
            }
            steps.append(.send(payload, after: after))
        }
        if let close {
            after += close.delay?.sample() ?? .zero
            steps.append(.close(code: close.code, reason: close.reason, after: after))
        }
        return steps
    }
}
