import Foundation
import KakapoHTTP
import KakapoJSON

/// One message a route's WebSocket script sends: text (a template), JSON (templates in its strings, sent as
/// a text message) or bytes (`base64`, a binary message), with an optional `delay` counted from the message
/// before it (or from the event it answers).
///
/// ```yaml
/// send:
///   - {text: "welcome to {{params.room}}"}
///   - {json: {type: pong, echo: "{{message.json.id}}"}, delay: 250ms}
///   - {base64: AAEC}
/// ```
struct WebSocketScriptMessage: Sendable {
    /// What the message holds, as written: templates are rendered for each event.
    enum Content: Sendable {
        case text(Template)
        case json(JSONTemplate)
        case bytes([UInt8])
    }

    /// What the message holds.
    let content: Content
    /// How long to wait after the message before it; nil for no wait. Bounded like a route's latency.
    let delay: Latency?

    /// The members a message to send may have.
    static let keys = ["text", "json", "base64", "delay"]

    /// Reads one message of a `send:` list; its templates may name what `scope` allows.
    init(_ node: DefinitionNode, scope: TemplateScope) throws(RoutesError) {
        let object = try node.object(allowed: WebSocketScriptMessage.keys)
        let (key, value) = try object.exactlyOne(of: ["text", "json", "base64"], what: "a message to send")
        switch key {
        case "text":
            let text = try value.string()
            do throws(TemplateError) {
                let template = try Template(text)
                try scope.check(template)
                content = .text(template)
            } catch {
                throw value.error(error.message)
            }
        case "json":
            do throws(TemplateError) {
                content = .json(try JSONTemplate(value.value, scope: scope))
            } catch {
                throw value.error(error.message)
            }
        default:
            guard let data = Data(base64Encoded: try value.string(), options: .ignoreUnknownCharacters) else {
                throw value.error("not valid base64")
            }
            content = .bytes(Array(data))
        }
        delay = try object["delay"].map { (node) throws(RoutesError) in try Latency(node) }
    }

    /// The message for one event: a text message for `text` and `json`, a binary one for `base64`; nil when
    /// it would be longer than `limit` bytes (templates repeating a long client message), found without
    /// building more than `limit` bytes of it.
    func render(_ context: TemplateContext, limit: Int) -> WebSocketMessage.Payload? {
        switch content {
        case .text(let template):
            if let constant = template.constantText { return constant.utf8.count <= limit ? .text(constant) : nil }
            var bytes: [UInt8] = []
            guard template.render(context, into: &bytes, limit: limit) else { return nil }
            return .text(String(decoding: bytes, as: UTF8.self))
        case .json(let template):
            var bytes: [UInt8] = []
            guard template.write(context, into: &bytes, limit: limit) else { return nil }
            return .text(String(decoding: bytes, as: UTF8.self))
        case .bytes(let bytes): return bytes.count <= limit ? .binary(bytes) : nil
        }
    }
}
