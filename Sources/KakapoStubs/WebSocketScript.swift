import KakapoHTTP

/// A route's scripted WebSocket conversation: what the route answers an upgrade with instead of a
/// response. Kakapo answers `101` (with the subprotocol when the client offers it), sends `send` and
/// perhaps closes (`close`) at once, then answers each client message with the first rule of `on` that
/// takes it; a message no rule takes is ignored.
///
/// ```yaml
/// routes:
///   - path: /chat/:room
///     websocket:
///       subprotocol: chat
///       send: [{text: "welcome to {{params.room}}"}]
///       on:
///         - when: {fields: {/type: ping}}
///           send: [{json: {type: pong, room: "{{params.room}}", echo: "{{message.json.payload.id}}"}}]
///         - when: {json: {type: status}}
///           send: [{json: {type: status, ok: true}}]
///         - when: {text: {matches: "^bye"}}
///           send: [{text: see you}]
///           close: {code: 1000, reason: done}
///         - send: [{text: "unknown: {{message.text}}"}]
/// ```
package struct WebSocketScript: Sendable {
    /// The subprotocols the route speaks, preferred first (`subprotocol: chat`, or a list).
    let subprotocols: [String]
    /// What happens once the `101` is out.
    let opening: WebSocketScriptReply
    /// What answers each client message: the first rule that takes it.
    let rules: [WebSocketScriptRule]

    /// The members a `websocket:` may have.
    static let keys = ["subprotocol", "send", "close", "on"]

    /// Reads a route's `websocket:`; its templates may name what `scope` allows.
    init(_ node: DefinitionNode, scope: TemplateScope) throws(RoutesError) {
        let object = try node.object(allowed: WebSocketScript.keys)
        var subprotocols: [String] = []
        if let node = object["subprotocol"] {
            let items = if case .array = node.value { try node.array() } else { [node] }
            for item in items {
                let name = try item.string()
                // A subprotocol is a token (RFC 6455 4.1), as a header name is.
                guard ResponseTemplate.isHeaderName(name) else {
                    throw item.error("\"\(name)\" is not a subprotocol name (letters, digits and !#$%&'*+-.^_`|~)")
                }
                subprotocols.append(name)
            }
        }
        self.subprotocols = subprotocols
        opening = try WebSocketScriptReply(send: object["send"], close: object["close"], scope: scope)
        var rules: [WebSocketScriptRule] = []
        for item in try object["on"]?.array() ?? [] { rules.append(try WebSocketScriptRule(item, scope: scope)) }
        self.rules = rules
    }

    /// The subprotocol the `101` names: the route's first that the client offers; nil when it offers none
    /// of them (the conversation goes ahead without one, as servers do).
    func subprotocol(offered: [String]) -> String? {
        subprotocols.first { offered.contains($0) }
    }
}
