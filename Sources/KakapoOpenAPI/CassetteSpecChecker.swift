import Foundation
import KakapoCassette
import KakapoHTTP
import KakapoJSON
import OpenAPIKit

/// Checks every recorded interaction of a cassette against an OpenAPI description: the path and method
/// must be an operation of the spec; path, query and header parameters must be present when required and
/// fit their schemas; request and response bodies must have a declared media type and, when JSON, fit the
/// schema (reported by JSON pointer); the status must be declared (exactly, as `2XX`, or by `default`).
/// A WebSocket upgrade with its conversation is not checked: OpenAPI does not describe WebSockets.
public struct CassetteSpecChecker: Sendable {
    public let spec: OpenAPISpec

    public init(spec: OpenAPISpec) {
        self.spec = spec
    }

    /// One finding per interaction, in cassette order.
    public func check(_ cassette: Cassette) -> [SpecFinding] {
        cassette.interactions.enumerated().map { check($0.element, position: $0.offset) }
    }

    /// The finding for one interaction.
    public func check(_ interaction: Interaction, position: Int) -> SpecFinding {
        let request = interaction.request
        let method = request.method.rawValue.uppercased()
        let status = interaction.response.status
        func finding(_ operation: String?, _ problems: [String]) -> SpecFinding {
            SpecFinding(
                position: position, method: request.method.rawValue, target: request.target, status: status,
                operation: operation, problems: problems)
        }
        // OpenAPI describes no WebSocket conversation; its upgrade is not held against the spec.
        if interaction.webSocket != nil { return finding(nil, []) }
        let candidates = spec.matches(path: request.path)
        guard let mostSpecific = candidates.first else {
            let missing = spec.missingPrefixes(of: request.path)
            if !missing.isEmpty {
                let named =
                    missing.count == 1
                    ? "the server prefix \(missing[0])" : "a server prefix (\(missing.joined(separator: ", ")))"
                return finding(
                    nil,
                    [
                        "\(request.path) is not in the spec: it lacks \(named) (\(missing[0])\(request.path) would match)"
                    ])
            }
            return finding(nil, ["no path in the spec matches \(request.path)"])
        }
        let components = spec.document.components
        var chosen:
            (
                template: PathTemplate, parameters: [String: String], item: OpenAPI.PathItem,
                operation: OpenAPI.Operation
            )?
        for candidate in candidates {
            guard let entry = spec.document.paths[candidate.template.path],
                let item = try? components.lookup(entry)
            else { continue }
            if let operation = Self.operation(of: item, for: method) {
                chosen = (candidate.template, candidate.parameters, item, operation)
                break
            }
        }
        guard let chosen else {
            let item = spec.document.paths[mostSpecific.template.path].flatMap { try? components.lookup($0) }
            let declared = item?.endpoints.map(\.method.rawValue).joined(separator: ", ") ?? ""
            return finding(
                nil,
                [
                    "the spec has no \(method) for \(mostSpecific.template.text)"
                        + (declared.isEmpty ? "" : " (it has \(declared))")
                ])
        }
        let label = "\(method) \(chosen.template.text)"
        var problems: [String] = []
        problems += checkParameters(request, chosen.parameters, item: chosen.item, operation: chosen.operation)
        problems += checkRequestBody(request, chosen.operation)
        problems += checkResponse(interaction.response, method: method, operation: chosen.operation, label: label)
        return finding(label, problems)
    }

    static func operation(of item: OpenAPI.PathItem, for method: String) -> OpenAPI.Operation? {
        if let verb = OpenAPI.HttpMethod(rawValue: method), let operation = item.for(verb) { return operation }
        // A server that answers GET answers HEAD (RFC 9110 §9.3.2), whether or not the spec says so.
        if method == "HEAD" { return item.get }
        return nil
    }

    // MARK: - Parameters

    private func checkParameters(
        _ request: HTTP.Request, _ bound: [String: String], item: OpenAPI.PathItem, operation: OpenAPI.Operation
    ) -> [String] {
        let components = spec.document.components
        var parameters: [String: OpenAPI.Parameter] = [:]
        for entry in item.parameters + operation.parameters {
            guard let parameter = try? components.lookup(entry) else { continue }
            parameters["\(parameter.location.rawValue) \(parameter.name)"] = parameter
        }
        let query = request.decodedQueryItems
        let validator = SchemaValidator(components: components, direction: .request)
        var problems: [String] = []
        for parameter in parameters.values.sorted(by: {
            ($0.location.rawValue, $0.name) < ($1.location.rawValue, $1.name)
        }) {
            let values: [String]
            switch parameter.location {
            case .path: values = bound[parameter.name].map { [$0] } ?? []
            case .query: values = query.filter { $0.name == parameter.name }.map { $0.value ?? "" }
            case .header:
                // OpenAPI says Accept, Content-Type and Authorization are described elsewhere, not as parameters.
                if ["accept", "content-type", "authorization"].contains(parameter.name.lowercased()) { continue }
                values = request.headers[parameter.name].map { [$0] } ?? []
            default: continue
            }
            let described = "\(parameter.location.rawValue) parameter \"\(parameter.name)\""
            if values.isEmpty {
                if parameter.required { problems.append("missing the required \(described)") }
                continue
            }
            guard case .a(let context) = parameter.schemaOrContent, let schema = try? components.lookup(context.schema)
            else { continue }
            let resolved = (try? components.lookup(schema)) ?? schema
            let value: JSONValue
            if case .array(_, let arrayContext) = resolved.value {
                let pieces =
                    values.count == 1 && !context.explode ? values[0].split(separator: ",").map(String.init) : values
                let itemSchema = arrayContext.items.flatMap { try? components.lookup($0) }
                value = .array(pieces.map { Self.coerce($0, to: itemSchema) })
            } else {
                value = Self.coerce(values[0], to: resolved)
            }
            for violation in validator.validate(value, against: schema) {
                problems.append("\(described)\(Self.located(violation.pointer)): \(violation.message)")
            }
        }
        return problems
    }

    /// A parameter's text as the JSON value its schema expects, when it reads as one; text otherwise.
    static func coerce(_ text: String, to schema: JSONSchema?) -> JSONValue {
        switch schema?.value {
        case .integer?, .number?:
            return Double(text) != nil && (try? JSONParser.parse(Array(text.utf8)))?.numberValue != nil
                ? .number(JSONNumber(literal: text)) : .string(text)
        case .boolean?:
            return text == "true" ? .bool(true) : text == "false" ? .bool(false) : .string(text)
        case .null?:
            return text.isEmpty ? .null : .string(text)
        default:
            return .string(text)
        }
    }

    // MARK: - Bodies

    private func checkRequestBody(_ request: HTTP.Request, _ operation: OpenAPI.Operation) -> [String] {
        let body = ContentCoding.decoding(request.body, headers: request.headers).content
        guard let declared = operation.requestBody, let requestBody = try? spec.document.components.lookup(declared)
        else {
            return body.isEmpty
                ? [] : ["the request has a \(body.count)-byte body but the spec declares no request body"]
        }
        if body.isEmpty {
            return requestBody.required ? ["missing the required request body"] : []
        }
        return checkBody(
            body, contentType: request.headers["Content-Type"], declared: requestBody.content, side: "request",
            direction: .request)
    }

    private func checkResponse(_ response: HTTP.Response, method: String, operation: OpenAPI.Operation, label: String)
        -> [String]
    {
        let responses = operation.responses
        let exact = responses.first { $0.key.value == .status(code: response.status) }
        let range = responses.first { Self.rangeDigit($0.key) == response.status / 100 }
        let fallback = responses.first { $0.key.value == .default }
        guard let entry = exact ?? range ?? fallback else {
            let listed = responses.keys.map(\.rawValue).joined(separator: ", ")
            return [
                "status \(response.status) is not declared for \(label)\(listed.isEmpty ? "" : " (it declares \(listed))")"
            ]
        }
        guard let declared = try? spec.document.components.lookup(entry.value) else { return [] }
        let body = ContentCoding.decoding(response.body, headers: response.headers).content
        if body.isEmpty || method == "HEAD" { return [] }
        if declared.content.isEmpty {
            return [
                "the response has a \(body.count)-byte body but the spec declares no content for \(entry.key.rawValue)"
            ]
        }
        return checkBody(
            body, contentType: response.headers["Content-Type"], declared: declared.content, side: "response",
            direction: .response)
    }

    private static func rangeDigit(_ code: OpenAPI.Response.StatusCode) -> Int? {
        guard case .range(let range) = code.value else { return nil }
        return range.rawValue.first?.wholeNumberValue
    }

    private func checkBody(
        _ body: [UInt8], contentType: String?, declared: OpenAPI.Content.Map, side: String,
        direction: SchemaValidator.Direction
    ) -> [String] {
        let recordedType = contentType?.split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard let (mediaType, entry) = Self.media(for: recordedType, in: declared) else {
            let listed = declared.keys.map(\.typeAndSubtype).joined(separator: ", ")
            return ["the \(side) Content-Type \(recordedType ?? "(none)") is not one the spec declares (\(listed))"]
        }
        guard Self.isJSON(recordedType ?? mediaType), let content = try? spec.document.components.lookup(entry),
            let schema = content.schema
        else { return [] }
        let value: JSONValue
        do {
            value = try JSONParser.parse(body)
        } catch {
            return ["the \(side) body is not valid JSON: \(error)"]
        }
        let validator = SchemaValidator(components: spec.document.components, direction: direction)
        return validator.validate(value, against: schema).map {
            "\(side) body\(Self.located($0.pointer)): \($0.message)"
        }
    }

    /// The declared media type a recorded Content-Type falls under: exact, then `type/*`, then `*/*`; with
    /// no Content-Type recorded, the only declared one.
    static func media(for recorded: String?, in declared: OpenAPI.Content.Map)
        -> (String, Either<OpenAPI.Reference<OpenAPI.Content>, OpenAPI.Content>)?
    {
        let entries = declared.map { ($0.key.typeAndSubtype.lowercased(), $0.value) }
        guard let recorded else { return entries.count == 1 ? entries[0] : nil }
        let family = recorded.split(separator: "/").first.map { "\($0)/*" } ?? ""
        return entries.first { $0.0 == recorded } ?? entries.first { $0.0 == family } ?? entries.first { $0.0 == "*/*" }
    }

    static func isJSON(_ mediaType: String) -> Bool {
        mediaType == "application/json" || mediaType.hasSuffix("+json")
    }

    static func located(_ pointer: JSONPointer) -> String {
        pointer.components.isEmpty ? "" : " \(pointer)"
    }
}
