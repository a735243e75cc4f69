import KakapoJSON

// Rendering with a bound in bytes. A tag's value comes from the client (a WebSocket message, a request body)
// and a template may repeat it: `{{message.text}}` written 1,000 times answering a 1 MB message asks for 1 GB.
// These renderers stop as soon as the output passes `limit`, so what they hold is at most `limit` plus one
// value, whatever the template repeats.

extension Template {
    /// `render(_:into:)` appending at most `limit` bytes in all to `bytes`; false (with `bytes` holding a
    /// partial text) once the rendering would pass it.
    func render(_ context: TemplateContext, into bytes: inout [UInt8], limit: Int) -> Bool {
        for part in parts {
            switch part {
            case .literal(let literal): bytes.append(contentsOf: literal.utf8)
            case .tag(let tag):
                switch context.value(of: tag) {
                case .string(let value)?:
                    // Checked before copying: a long value is refused without being copied.
                    guard bytes.count + value.utf8.count <= limit else { return false }
                    bytes.append(contentsOf: value.utf8)
                case let value?: JSONWriter().write(value, into: &bytes)
                case nil: break
                }
            }
            guard bytes.count <= limit else { return false }
        }
        return true
    }
}

extension JSONTemplate {
    /// The value for `context` written compactly (the bytes `JSONWriter().write(render(context))` gives), at
    /// most `limit` bytes in all appended to `output`; false once the writing would pass it.
    func write(_ context: TemplateContext, into output: inout [UInt8], limit: Int) -> Bool {
        switch self {
        case .constant(let value): JSONWriter().write(value, into: &output)
        case .string(let template):
            if let tag = template.soleTag {
                let value = context.value(of: tag) ?? .null
                if case .string(let text) = value, output.count + text.utf8.count > limit { return false }
                JSONWriter().write(value, into: &output)
            } else {
                var text: [UInt8] = []
                guard template.render(context, into: &text, limit: limit - output.count) else { return false }
                JSONWriter.writeString(String(decoding: text, as: UTF8.self), into: &output)
            }
        case .array(let items):
            output.append(UInt8(ascii: "["))
            for (offset, item) in items.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                guard item.write(context, into: &output, limit: limit) else { return false }
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (offset, (key, member)) in members.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                JSONWriter.writeString(key, into: &output)
                output.append(UInt8(ascii: ":"))
                guard member.write(context, into: &output, limit: limit) else { return false }
            }
            output.append(UInt8(ascii: "}"))
        }
        return output.count <= limit
    }
}
