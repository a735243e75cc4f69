import Foundation
import KakapoGRPC
import KakapoGraphQL
import KakapoHTTP
import KakapoJSON

/// A request body in the form it is compared in: JSON as JSON (key order, whitespace and number
/// spelling do not matter), form bodies field by field, multipart part by part whatever the boundary,
/// anything else byte for byte; a GraphQL operation (in any of its forms, GET included) by its
/// `GraphQLOperation.matchingForm`. Ignored and redacted fields are taken out first. A recorded body is
/// normalized once, when it is indexed.
enum ComparableBody: Sendable {
    case empty
    case json(JSONValue)
    case form([QueryItem])
    case multipart([MultipartPart])
    case bytes([UInt8])
    /// A GraphQL request: `form` is what is compared (ignored and redacted fields taken out), `request`
    /// what miss reports name.
    case graphQL(form: JSONValue, request: GraphQLRequest)
    /// A gRPC call's messages as JSON (with `--proto-descriptor`), ignored and redacted fields taken out of
    /// each: the same messages match however their bytes were encoded.
    case grpc([JSONValue])

    /// The comparable body of `request`; `outside` is its GraphQL operation when it came in a GET or as
    /// `application/graphql` (`GraphQLRequest(outsideJSONBody:)`, worked out once by the caller).
    init(_ request: HTTP.Request, outside: GraphQLRequest?, redactor: Redactor, matching: MatchOptions) {
        if let outside {
            self = Self.graphQLBody(outside, redactor: redactor, matching: matching)
            return
        }
        if let schema = matching.grpcSchema, GRPC.isGRPC(request),
            let messages = Self.grpcMessages(request, schema: schema, redactor: redactor, matching: matching)
        {
            self = .grpc(messages)
            return
        }
        if redactor.byShape, GRPC.isGRPC(request), Redactor.isAuthenticationCall(request.path) {
            // Not read by a descriptor set, so recorded with every text field redacted: compared the same way.
            self = .bytes(redactor.grpcAuthenticationForMatching(request))
            return
        }
        self.init(
            request.body, headers: request.headers, redactor: redactor, matching: matching, method: request.method)
    }

    /// A GraphQL request's form with the ignored and redacted pointers taken out: of the whole body, and, in
    /// a batch, of each operation, so `/variables/id` applies to every operation of a batch.
    private static func graphQLBody(_ request: GraphQLRequest, redactor: Redactor, matching: MatchOptions)
        -> ComparableBody
    {
        let pointers = matching.ignoredBodyFields + redactor.jsonPointers
        var form = request.matchingForm
        for pointer in pointers {
            form = form.replacing(pointer, with: nil)
            if request.isBatch, case .array(let elements) = form {
                form = .array(elements.map { $0.replacing(pointer, with: nil) })
            }
        }
        return .graphQL(form: form, request: request)
    }

    /// A gRPC request's messages as JSON by its method's input type, each without the ignored and redacted
    /// pointers (`/name` applies to every message); nil when a message does not decode (then the bytes are
    /// compared).
    private static func grpcMessages(
        _ request: HTTP.Request, schema: GRPCSchema, redactor: Redactor, matching: MatchOptions
    ) -> [JSONValue]? {
        guard let messages = try? GRPC.messages(in: request.body) else { return nil }
        let pointers = matching.ignoredBodyFields + redactor.jsonPointers
        var forms: [JSONValue] = []
        forms.reserveCapacity(messages.count)
        for message in messages {
            guard var json = schema.json(of: message, path: request.path, side: .request) else { return nil }
            for pointer in pointers { json = json.replacing(pointer, with: nil) }
            forms.append(json)
        }
        return forms
    }

    private init(
        _ body: [UInt8], headers: HTTP.Headers, redactor: Redactor, matching: MatchOptions, method: HTTP.Method
    ) {
        guard !body.isEmpty else {
            self = .empty
            return
        }
        let contentType = headers["Content-Type"] ?? ""
        let lowered = contentType.lowercased()
        if lowered.hasPrefix("application/x-www-form-urlencoded") {
            let text = String(decoding: body, as: UTF8.self)
            self = .form(
                QueryItem.parse(text).map { item in
                    let name = item.name.removingPercentEncodingLeniently()
                    let value =
                        redactor.isSecretQueryParameter(name)
                        ? Redactor.placeholder : item.value?.removingPercentEncodingLeniently()
                    return QueryItem(name: name, value: value)
                }.filter { !matching.ignoredQueryParameters.contains($0.name) }.sorted())
            return
        }
        if lowered.hasPrefix("multipart/"),
            let parts = MultipartPart.parse(
                redactor.byShape || redactor.allowlist != nil
                    ? redactor.multipartForMatching(body, contentType: contentType) : body, contentType: contentType)
        {
            self = .multipart(parts)
            return
        }
        if JSONParser.looksLikeContainer(body), let parsed = try? JSONParser.parse(body) {
            if method == .post, let graphQL = GraphQLRequest(json: parsed) {
                self = Self.graphQLBody(graphQL, redactor: redactor, matching: matching)
                return
            }
            var json = JSONRPCMessage.forMatching(parsed)
            for pointer in matching.ignoredBodyFields + redactor.jsonPointers {
                json = json.replacing(pointer, with: nil)
            }
            self = .json(json)
            return
        }
        if redactor.byShape, !Redactor.isText(lowered), !GRPC.isGRPC(contentType: lowered) {
            // Binary: compared as recording masked it (credential shapes at their own length).
            self = .bytes(redactor.binaryForMatching(body))
            return
        }
        if Self.isXMLRequest(lowered, body, redactor: redactor) {
            // Compared as recording wrote it: secret elements and values replaced, the rest byte for byte.
            self = .bytes(redactor.xmlForMatching(body))
            return
        }
        self = .bytes(body)
    }

    private static func isXMLRequest(_ contentType: String, _ body: [UInt8], redactor: Redactor) -> Bool {
        (redactor.byShape || redactor.allowlist != nil) && Redactor.isXML(contentType: contentType, body)
            && CredentialValues.mightHoldCredential(body)
    }

    /// The places of a recorded body that hold the redaction placeholder: the live request has the real
    /// value there, so matching leaves them out on both sides.
    var redactedPlaces: RedactedPlaces {
        switch self {
        case .json(let json), .graphQL(let json, _):
            return RedactedPlaces(pointers: json.pointers(toString: Redactor.placeholder), formFields: [])
        case .form(let items):
            return RedactedPlaces(
                pointers: [], formFields: Set(items.filter { $0.value == Redactor.placeholder }.map(\.name)))
        case .bytes(let bytes):
            // A text body redacted in place (`token: Bearer [REDACTED]`): the live one is compared with its
            // secrets cut out the same way.
            let placeholder = Array(Redactor.placeholder.utf8)
            let holdsPlaceholder = bytes.indices.contains { bytes[$0...].starts(with: placeholder) }
            return RedactedPlaces(pointers: [], formFields: [], textValues: holdsPlaceholder)
        case .grpc(let messages):
            // A member redacted in any message is left out of every one (as `ignoredBodyFields` are).
            var pointers: [JSONPointer] = []
            for message in messages {
                for pointer in message.pointers(toString: Redactor.placeholder) where !pointers.contains(pointer) {
                    pointers.append(pointer)
                }
            }
            return RedactedPlaces(pointers: pointers, formFields: [])
        default: return RedactedPlaces(pointers: [], formFields: [])
        }
    }

    /// This body without the given places.
    func removing(_ places: RedactedPlaces) -> ComparableBody {
        guard !places.isEmpty else { return self }
        switch self {
        case .json(var json):
            for pointer in places.pointers { json = json.replacing(pointer, with: nil) }
            return .json(json)
        case .graphQL(var form, let request):
            for pointer in places.pointers { form = form.replacing(pointer, with: nil) }
            return .graphQL(form: form, request: request)
        case .form(let items): return .form(items.filter { !places.formFields.contains($0.name) })
        case .grpc(let messages):
            return .grpc(
                messages.map { message in
                    var json = message
                    for pointer in places.pointers { json = json.replacing(pointer, with: nil) }
                    return json
                })
        case .bytes(let bytes) where places.textValues:
            // A gRPC call recorded without a descriptor set: its fields redacted as recording did, frames intact.
            if let grpc = Redactor.grpcBodyForMatching(bytes) { return .bytes(grpc) }
            var kinds: [String] = []
            return .bytes(CredentialValues.redacting(bytes, noting: &kinds) ?? bytes)
        default: return self
        }
    }

    func matches(_ other: ComparableBody) -> Bool {
        switch (self, other) {
        case (.empty, .empty): return true
        case (.json(let a), .json(let b)): return a.isEquivalent(to: b)
        case (.form(let a), .form(let b)): return a == b
        case (.multipart(let a), .multipart(let b)): return a == b
        case (.bytes(let a), .bytes(let b)): return a == b
        case (.graphQL(let a, _), .graphQL(let b, _)): return a.isEquivalent(to: b)
        case (.grpc(let a), .grpc(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isEquivalent(to: $1) }
        default: return false
        }
    }

    /// True when both are GraphQL requests of other operations (names, or the number in a batch), or
    /// JSON-RPC calls of other methods, so a miss report ranks this recording below those of the request's
    /// own operation.
    func isOtherOperation(than other: ComparableBody) -> Bool {
        switch (self, other) {
        case (.graphQL(_, let recorded), .graphQL(_, let live)):
            return !recorded.operations.map(\.name).elementsEqual(live.operations.map(\.name))
        case (.json(let recorded), .json(let live)):
            return JSONRPCMessage.isOtherCall(recorded, than: live)
        default:
            return false
        }
    }

    /// How `other` (the request) differs from this (the recording), for miss reports; `redactor` keeps
    /// secret-named values out of them.
    func differences(from other: ComparableBody, redactor: Redactor) -> [String] {
        if matches(other) { return [] }
        switch (self, other) {
        case (.empty, _): return ["body: the request has a body; the recording has none"]
        case (_, .empty): return ["body: the recording has a body; the request has none"]
        case (.graphQL(let recordedForm, let recorded), .graphQL(let liveForm, let live)):
            return GraphQLDifferences(
                recorded: recorded, recordedForm: recordedForm, live: live, liveForm: liveForm,
                hidesValue: { redactor.isSecretField($0) }
            ).lines
        case (.json(let recorded), .json(let live)):
            return recorded.differences(from: live).map {
                "body field \($0.description.isEmpty ? "/" : $0.description) differs"
            }
        case (.grpc(let recorded), .grpc(let live)):
            if recorded.count != live.count {
                return ["gRPC: \(live.count) messages here, \(recorded.count) recorded"]
            }
            return zip(recorded, live).enumerated().flatMap { index, pair in
                pair.0.differences(from: pair.1).map {
                    "gRPC message \(index + 1) field \($0.description.isEmpty ? "/" : $0.description) differs"
                }
            }
        case (.form(let recorded), .form(let live)):
            let names = Set(recorded.map(\.name)).union(live.map(\.name)).sorted()
            return names.filter { name in
                recorded.filter { $0.name == name } != live.filter { $0.name == name }
            }.map { "form field \($0) differs" }
        case (.multipart(let recorded), .multipart(let live)):
            if recorded.count != live.count {
                return ["multipart: \(live.count) parts here, \(recorded.count) recorded"]
            }
            return zip(recorded, live).enumerated().filter { $0.element.0 != $0.element.1 }.map {
                "multipart part \($0.offset + 1) (\($0.element.0.name ?? "unnamed")) differs"
            }
        default:
            return ["body: the bodies differ"]
        }
    }
}

/// Where a recorded body was redacted.
struct RedactedPlaces: Hashable, Sendable {
    let pointers: [JSONPointer]
    let formFields: Set<String>
    /// A text body holds the placeholder where a secret-shaped value (a bearer token, a JWT) was cut out.
    var textValues = false
    var isEmpty: Bool { pointers.isEmpty && formFields.isEmpty && !textValues }
}

/// One part of a multipart body: its headers (boundary-independent) and content.
struct MultipartPart: Hashable, Sendable {
    let headers: [String]
    let content: [UInt8]

    /// The `name` of its Content-Disposition, for messages.
    var name: String? {
        for header in headers where header.lowercased().hasPrefix("content-disposition") {
            guard let range = header.range(of: "name=\"") else { continue }
            return String(header[range.upperBound...].prefix { $0 != "\"" })
        }
        return nil
    }

    /// Splits a multipart body by the boundary its Content-Type names; nil when it cannot.
    static func parse(_ body: [UInt8], contentType: String) -> [MultipartPart]? {
        guard let range = contentType.range(of: "boundary=", options: .caseInsensitive) else { return nil }
        var boundary = contentType[range.upperBound...].prefix { $0 != ";" }.trimmingSpaces()
        if boundary.hasPrefix("\""), boundary.hasSuffix("\""), boundary.count >= 2 {
            boundary = String(boundary.dropFirst().dropLast())
        }
        guard !boundary.isEmpty else { return nil }
        let delimiter = Array(("--" + boundary).utf8)
        var parts: [MultipartPart] = []
        var positions: [Int] = []
        var index = 0
        while index + delimiter.count <= body.count {
            if body[index] == delimiter[0], body[index..<(index + delimiter.count)].elementsEqual(delimiter) {
                positions.append(index)
                index += delimiter.count
            } else {
                index += 1
            }
        }
        guard positions.count >= 2 else { return nil }
        for (start, end) in zip(positions, positions.dropFirst()) {
            var section = Array(body[(start + delimiter.count)..<end])
            if section.starts(with: [0x0D, 0x0A]) { section.removeFirst(2) }
            if section.count >= 2, section.suffix(2) == [0x0D, 0x0A] { section.removeLast(2) }
            let separator: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A]
            var split = section.count
            var cursor = 0
            while cursor + 4 <= section.count {
                if section[cursor..<(cursor + 4)].elementsEqual(separator) {
                    split = cursor
                    break
                }
                cursor += 1
            }
            let head = String(decoding: section[0..<split], as: UTF8.self)
            let content = split + 4 <= section.count ? Array(section[(split + 4)...]) : []
            parts.append(
                MultipartPart(
                    headers: head.split(separator: "\r\n").map { String($0) }, content: content))
        }
        return parts
    }
}
