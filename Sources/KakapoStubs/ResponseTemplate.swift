import Foundation
import KakapoHTTP
import KakapoJSON

/// One answer a route gives: status, headers (templated values) and a body that is JSON (templated
/// strings), text (templated) or bytes (`base64`, `file`).
struct ResponseTemplate: Sendable {
    enum Body: Sendable {
        case empty
        case json(JSONTemplate)
        case text(Template)
        case bytes([UInt8])
    }

    let status: Int
    let headers: [(String, Template)]
    let body: Body
    /// The whole answer, when nothing in it depends on the request.
    let constant: HTTP.Response?

    static let keys = ["status", "headers", "json", "text", "base64", "file"]

    init(_ node: DefinitionNode, context: DefinitionContext, scope: TemplateScope = .any) throws(RoutesError) {
        let object = try node.object(allowed: ResponseTemplate.keys)
        status = try object["status"]?.integer(in: 100...599, "an integer from 100 to 599") ?? 200
        var headers: [(String, Template)] = []
        for (name, value) in try object["headers"]?.entries() ?? [] {
            guard ResponseTemplate.isHeaderName(name) else {
                throw value.error("\"\(name)\" is not a header name (letters, digits and !#$%&'*+-.^_`|~)")
            }
            let values = (try? value.array()) ?? [value]
            for value in values {
                let template = try ResponseTemplate.template(value.scalarText(), at: value, scope: scope)
                guard ResponseTemplate.isHeaderValue(template.literalText) else {
                    throw value.error("a header value cannot hold a line break (CR, LF) or NUL")
                }
                headers.append((name, template))
            }
        }
        let bodyKeys = ["json", "text", "base64", "file"].filter(object.has)
        if bodyKeys.count > 1 {
            throw object.error("a response takes one body, not " + bodyKeys.joined(separator: " and "))
        }
        var contentType: String?
        switch bodyKeys.first {
        case "json"?:
            let value = object["json"]!
            do {
                body = .json(try JSONTemplate(value.value, scope: scope))
            } catch {
                throw value.error(error.message)
            }
            contentType = "application/json"
        case "text"?:
            let value = object["text"]!
            body = .text(try ResponseTemplate.template(try value.string(), at: value, scope: scope))
            contentType = "text/plain; charset=utf-8"
        case "base64"?:
            let value = object["base64"]!
            guard let data = Data(base64Encoded: try value.string(), options: .ignoreUnknownCharacters) else {
                throw value.error("not valid base64")
            }
            body = .bytes(Array(data))
            contentType = "application/octet-stream"
        case "file"?:
            let value = object["file"]!
            body = .bytes(try context.read(value))
            contentType = ResponseTemplate.contentType(forFile: try value.string())
        default:
            body = .empty
        }
        if let contentType, !headers.contains(where: { $0.0.caseInsensitiveEquals("Content-Type") }) {
            headers.append(("Content-Type", try! Template(contentType)))
        }
        self.headers = headers
        let isConstant: Bool
        switch body {
        case .json(let template): isConstant = template.isConstant
        case .text(let template): isConstant = template.isConstant
        case .empty, .bytes: isConstant = true
        }
        if isConstant && headers.allSatisfy({ $0.1.isConstant }) {
            constant = ResponseTemplate.constantResponse(status: status, headers: headers, body: body)
        } else {
            constant = nil
        }
    }

    /// The answer to one request. A header whose rendered value would hold CR, LF or NUL (a tag fed from
    /// the request, such as `{{query.x}}`) throws: such a value would split the header section. So does a
    /// body past `largestRenderedBody` or a header value past `largestRenderedHeader`.
    func render(_ context: TemplateContext) throws(RenderError) -> HTTP.Response {
        if let constant { return constant }
        var fields = HTTP.Headers()
        for (name, value) in headers {
            let text: String
            if let constant = value.constantText {
                text = constant
            } else {
                var rendered: [UInt8] = []
                guard value.render(context, into: &rendered, limit: Self.largestRenderedHeader) else {
                    throw RenderError.tooLarge("the header \(name)", limit: Self.largestRenderedHeader)
                }
                text = String(decoding: rendered, as: UTF8.self)
            }
            guard ResponseTemplate.isHeaderValue(text) else { throw RenderError.headerValue(name) }
            fields.add(name: name, value: text)
        }
        var bytes: [UInt8] = []
        let limit = Self.largestRenderedBody
        switch body {
        case .empty: break
        case .bytes(let data): bytes = data
        case .json(let template):
            guard template.write(context, into: &bytes, limit: limit) else {
                throw RenderError.tooLarge("the body", limit: limit)
            }
        case .text(let template):
            guard template.render(context, into: &bytes, limit: limit) else {
                throw RenderError.tooLarge("the body", limit: limit)
            }
        }
        return HTTP.Response(status: status, headers: fields, body: bytes)
    }

    /// The most bytes a templated body may render to: a tag's value comes from the request, and a
    /// template may repeat it (`{{body.x}}` 500 times over a 1 MB body asks for 500 MB). Rendering stops
    /// as soon as it would pass this, holding at most this much plus one value.
    package static let largestRenderedBody = 16 << 20
    /// The most bytes one templated header value may render to.
    package static let largestRenderedHeader = 64 << 10

    /// The answer of a response without tags.
    private static func constantResponse(status: Int, headers: [(String, Template)], body: Body) -> HTTP.Response {
        var fields = HTTP.Headers()
        for (name, value) in headers { fields.add(name: name, value: value.literalText) }
        let bytes: [UInt8]
        switch body {
        case .empty: bytes = []
        case .bytes(let data): bytes = data
        case .json(let template): bytes = JSONWriter().write(template.constantValue)
        case .text(let template): bytes = Array(template.literalText.utf8)
        }
        return HTTP.Response(status: status, headers: fields, body: bytes)
    }

    private static func template(_ text: String, at node: DefinitionNode, scope: TemplateScope) throws(RoutesError)
        -> Template
    {
        do {
            let template = try Template(text)
            try scope.check(template)
            return template
        } catch {
            throw node.error(error.message)
        }
    }

    /// True for an RFC 9110 token: what a header name is made of.
    static func isHeaderName(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
                    || "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
    }

    /// False when the text holds CR, LF or NUL, which no header value may.
    static func isHeaderValue(_ text: String) -> Bool {
        !text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
    }

    static func contentType(forFile name: String) -> String {
        switch URL(fileURLWithPath: name).pathExtension.lowercased() {
        case "json": return "application/json"
        case "html", "htm": return "text/html; charset=utf-8"
        case "txt": return "text/plain; charset=utf-8"
        case "csv": return "text/csv; charset=utf-8"
        case "xml": return "application/xml"
        case "js": return "text/javascript; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "svg": return "image/svg+xml"
        case "pdf": return "application/pdf"
        default: return "application/octet-stream"
        }
    }
}

/// A rendered header value that holds CR, LF or NUL.
/// Why a route's response could not be rendered for a request: the route answers 500 saying so.
struct RenderError: Error {
    let message: String

    /// A header value with CR, LF or NUL in it.
    static func headerValue(_ name: String) -> RenderError {
        RenderError(
            message:
                "the header \(name) of the route's response rendered to a value with a line break (CR, LF) or NUL, "
                + "which would split the header section; the request fed it through a template")
    }

    /// `part` of the response rendered past `limit` bytes.
    static func tooLarge(_ part: String, limit: Int) -> RenderError {
        RenderError(
            message:
                "\(part) of the route's response would render to more than \(limit) bytes (its template repeats what the request sent); rendering stopped there"
        )
    }
}

extension Template {
    /// The text when the template has no tag, else nil.
    var constantText: String? {
        if parts.isEmpty { return "" }
        if parts.count == 1, case .literal(let text) = parts[0] { return text }
        return nil
    }

    /// The text of a template without tags.
    var literalText: String { parts.map { if case .literal(let text) = $0 { text } else { "" } }.joined() }
}

extension JSONTemplate {
    /// The value of a constant template.
    var constantValue: JSONValue {
        if case .constant(let value) = self { return value }
        return .null
    }
}
