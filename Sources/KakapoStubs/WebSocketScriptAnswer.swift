import KakapoHTTP
import KakapoRouter

/// A route's script answering one upgrade request: what the engine plays on the connection. Its
/// templates read the upgrade request (parameters, query, headers, `now`, `uuid`) and, in a rule's
/// messages, the client's message; `now` and `uuid` are made once per event.
package struct WebSocketScriptAnswer: Sendable {
    /// The id of the route.
    package let route: String
    /// The subprotocol of the `101`, one the client offered; nil for none.
    package let subprotocol: String?
    /// The route's script.
    let script: WebSocketScript
    /// The upgrade request, which templates read.
    let request: HTTP.Request
    /// The route's path parameters for it.
    let parameters: RouteParameters

    /// The script's answer to `request`, naming the route's first subprotocol the client offers.
    init(route: String, script: WebSocketScript, request: HTTP.Request, parameters: RouteParameters) {
        self.route = route
        self.script = script
        self.request = request
        self.parameters = parameters
        subprotocol = script.subprotocol(offered: request.offeredWebSocketSubprotocols)
    }

    /// What to do once the `101` is out; the messages are at most `limit` bytes in all (`.tooLarge` past it).
    package func opened(limit: Int = .max) -> [WebSocketScriptStep] {
        script.opening.steps(TemplateContext(request: request, parameters: parameters), limit: limit)
    }

    /// The answer to one client message: the index of the rule that took it and its steps, or nil when
    /// no rule takes it. Its messages are at most `limit` bytes in all (`.tooLarge` past it): the engine
    /// passes its largest message body, since a template may repeat the client's message.
    package func received(_ message: WebSocketMessage.Payload, limit: Int = .max) -> (
        rule: Int, steps: [WebSocketScriptStep]
    )? {
        let context = TemplateContext(request: request, parameters: parameters, message: message)
        var budget = ValueMatcher.stepBudget
        for (index, rule) in script.rules.enumerated() where rule.holds(for: context, budget: &budget) {
            return (index, rule.reply.steps(context, limit: limit))
        }
        return nil
    }
}
