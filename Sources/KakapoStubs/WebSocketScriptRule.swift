import Foundation
import KakapoHTTP
import KakapoJSON

/// One rule of a route's WebSocket script: a condition on the client's message (none: any message) and
/// what to answer when it holds. The script's first rule that holds answers.
///
/// ```yaml
/// - when: {fields: {/type: ping}}
///   send: [{json: {type: pong, echo: "{{message.json.payload.id}}"}}]
/// - when: {text: {matches: "^bye"}}
///   close: {code: 1000, reason: done}
/// ```
struct WebSocketScriptRule: Sendable {
    /// What a rule's `when` asks of the client's message. Text and JSON conditions look at text messages,
    /// `base64` at binary ones. Nothing in a `when` is a template: it is compared as written.
    enum Condition: Sendable {
        /// `{text: "..."}`: the text message is exactly this.
        case text(String)
        /// `{text: {matches: REGEX}}`: the pattern matches somewhere in the text message (anchor it with
        /// `^` and `$` for all of it). `LinearRegex`: linear time whatever the pattern.
        case matches(LinearRegex)
        /// `{json: VALUE}`: the text message, parsed as JSON, is this value (key order and number spelling
        /// do not count).
        case json(JSONValue)
        /// `{fields: {/type: ping, /id: {present: true}}}`: the text message is JSON and the value at each
        /// pointer holds, exactly as in a route's `when.json` (equal, `{matches: REGEX}` on the whole value,
        /// `{present: BOOL}`); other members do not count.
        case fields([(JSONPointer, ValueMatcher)])
        /// `{base64: "..."}`: the binary message is exactly these bytes.
        case bytes([UInt8])
    }

    /// What the client's message must be for the rule to answer; nil for any message.
    let condition: Condition?
    /// What the rule answers with.
    let reply: WebSocketScriptReply

    /// The members a rule may have.
    static let keys = ["when", "send", "close"]

    /// Reads one rule of `on:`; its messages' templates may also read the client's message.
    init(_ node: DefinitionNode, scope: TemplateScope) throws(RoutesError) {
        let object = try node.object(allowed: WebSocketScriptRule.keys)
        condition = try object["when"].map { (node) throws(RoutesError) in try WebSocketScriptRule.condition(node) }
        reply = try WebSocketScriptReply(send: object["send"], close: object["close"], scope: scope.answeringMessage)
    }

    private static func condition(_ node: DefinitionNode) throws(RoutesError) -> Condition {
        let kinds = ["text", "json", "fields", "base64"]
        let object = try node.object(allowed: kinds)
        let (key, value) = try object.exactlyOne(of: kinds, what: "a websocket rule's when")
        switch key {
        case "text":
            if case .object = value.value {
                let pattern = try value.object(allowed: ["matches"])
                guard let node = pattern["matches"] else {
                    throw value.error("expected a text, or {matches: REGEX}")
                }
                let text = try node.string()
                do throws(LinearRegex.SyntaxError) {
                    return .matches(try LinearRegex(text))
                } catch {
                    throw node.error("not a valid regular expression: \(text) (\(error.message))")
                }
            }
            let text = try value.string()
            try refuseTemplates(text, at: value)
            return .text(text)
        case "json":
            try refuseTemplates(in: value)
            return .json(value.value)
        case "fields":
            try refuseTemplates(in: value)
            var fields: [(JSONPointer, ValueMatcher)] = []
            for (text, matcher) in try value.entries() {
                guard let pointer = JSONPointer(text), !text.isEmpty else {
                    throw matcher.error("a JSON pointer starts with '/' (such as /user/name), not \"\(text)\"")
                }
                fields.append((pointer, try ValueMatcher(matcher)))
            }
            guard !fields.isEmpty else { throw value.error("expected at least one field, such as {/type: ping}") }
            return .fields(fields)
        default:
            guard let data = Data(base64Encoded: try value.string(), options: .ignoreUnknownCharacters) else {
                throw value.error("not valid base64")
            }
            return .bytes(Array(data))
        }
    }

    /// A `{{...}}` in a `when` would be compared as written, never rendered: say so rather than never match.
    private static func refuseTemplates(_ text: String, at node: DefinitionNode) throws(RoutesError) {
        guard let open = text.range(of: "{{"), text[open.upperBound...].contains("}}") else { return }
        throw node.error(
            "a when compares the client's message as written: templates ({{...}}) belong in the messages a rule sends")
    }

    private static func refuseTemplates(in node: DefinitionNode) throws(RoutesError) {
        switch node.value {
        case .string(let text): try refuseTemplates(text, at: node)
        case .array: for item in try node.array() { try refuseTemplates(in: item) }
        case .object: for (_, member) in try node.entries() { try refuseTemplates(in: member) }
        default: break
        }
    }

    /// Whether the rule takes the message in `context`; a pattern spends `budget` (shared by every rule
    /// tried for one message) and does not hold once it runs out.
    func holds(for context: TemplateContext, budget: inout Int) -> Bool {
        guard let condition else { return true }
        switch condition {
        case .text(let expected): return context.messageText == expected
        case .matches(let regex):
            guard let text = context.messageText else { return false }
            return regex.matches(text, budget: &budget) ?? false
        case .json(let expected):
            guard let json = context.messageJSON else { return false }
            return json.isEquivalent(to: expected)
        case .fields(let fields):
            guard let json = context.messageJSON else { return false }
            return fields.allSatisfy { pointer, matcher in matcher.accepts(json: json[pointer: pointer]) }
        case .bytes(let expected):
            guard case .binary(let bytes)? = context.message else { return false }
            return bytes == expected
        }
    }
}
