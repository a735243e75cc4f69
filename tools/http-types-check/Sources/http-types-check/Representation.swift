import HTTPTypes
import KakapoHTTP
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// What came back from one round trip: the fields, and which input fields the representation refused
/// outright (an `HTTPField.Name` that is nil), as opposed to losing them without a word.
struct RoundTrip {
    var fields: [RawField]
    var refused: Set<Int> = []
}

/// One way of holding header fields, as a round trip from bytes into it and back out to bytes.
struct Representation: Sendable {
    var name: String
    var roundTrip: @Sendable (FieldList) -> RoundTrip

    /// Kakapo's own types, then swift-http-types through each of its initializers, then both behind the
    /// NIOHTTP1 parser's head: Kakapo's server as it is, and Hummingbird 2's conversion (NIOHTTPTypesHTTP1).
    static let all: [Representation] = [
        Representation(name: "Kakapo HTTP.Headers") { list in
            RoundTrip(fields: kakapoHeaders(list.fields).map { RawField($0.name, $0.value) })
        },
        Representation(name: "HTTPFields, String values") { list in
            httpFields(list.fields) { HTTPField(name: $0, value: text($1)) }
        },
        Representation(name: "HTTPFields, byte values") { list in
            httpFields(list.fields) { HTTPField(name: $0, value: $1) }
        },
        Representation(name: "HTTPFields, lenientValue") { list in
            httpFields(list.fields) { HTTPField(name: $0, lenientValue: $1) }
        },
        Representation(name: "NIOHTTP1 -> HTTP.Headers -> NIOHTTP1") { list in
            let nio = nioHeaders(list.fields)
            let kakapo = HTTP.Headers(nio.map { HTTP.Headers.Field(name: $0.name, value: $0.value) })
            let back = HTTPHeaders(kakapo.map { ($0.name, $0.value) })
            return RoundTrip(fields: back.map { RawField($0.name, $0.value) })
        },
        Representation(name: "NIOHTTP1 -> HTTPRequest/Response -> NIOHTTP1") { list in
            let back: HTTPHeaders
            do {
                if list.isRequest {
                    let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: nioHeaders(list.fields))
                    back = try HTTPRequestHead(HTTPRequest(head, secure: false, splitCookie: false)).headers
                } else {
                    let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: nioHeaders(list.fields))
                    back = HTTPResponseHead(try HTTPResponse(head)).headers
                }
            } catch {
                return RoundTrip(fields: [], refused: Set(list.fields.indices))
            }
            return RoundTrip(fields: back.map { RawField($0.name, $0.value) })
        },
    ]

    /// Text as Kakapo's wire layers make it from bytes (NIO's parser and CurlHandle both decode UTF-8).
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    static func kakapoHeaders(_ fields: [RawField]) -> HTTP.Headers {
        HTTP.Headers(fields.map { HTTP.Headers.Field(name: text($0.name), value: text($0.value)) })
    }

    static func nioHeaders(_ fields: [RawField]) -> HTTPHeaders {
        HTTPHeaders(fields.map { (text($0.name), text($0.value)) })
    }

    /// Builds HTTPFields with `makeField`, skipping (and noting) each name `HTTPField.Name` refuses.
    static func httpFields(_ fields: [RawField], _ makeField: (HTTPField.Name, [UInt8]) -> HTTPField) -> RoundTrip {
        var built = HTTPFields()
        var refused: Set<Int> = []
        for (index, field) in fields.enumerated() {
            guard let name = HTTPField.Name(text(field.name)) else {
                refused.insert(index)
                continue
            }
            built.append(makeField(name, field.value))
        }
        let back = built.map { field in
            RawField(Array(field.name.rawName.utf8), field.withUnsafeBytesOfValue { Array($0) })
        }
        return RoundTrip(fields: back, refused: refused)
    }
}
