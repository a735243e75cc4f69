import Foundation
import KakapoHTTP
import KakapoJSON

/// How a body is stored in a cassette so a person can read and edit it (design 5.1):
///
/// - `{"json": VALUE, "layout": "indent:2", "newline": true}` for JSON that the layout rebuilds byte
///   for byte (key order and numbers are kept by `JSONValue`);
/// - `{"text": "..."}` for other UTF-8 text;
/// - `{"base64": "..."}` for binary data.
///
/// A gzip, deflate, br or zstd body is stored decoded, with `"encoding": "gzip"` (or the others), and encoded
/// again when loaded.
/// One that decodes to more than `ContentCoding.maximumDecodedBytes` is stored as sent (base64) with
/// `"undecoded"` saying why, and replays byte for byte. An empty body is not stored at all.
enum BodyCoding {
    static func encode(_ body: [UInt8], headers: HTTP.Headers) -> JSONValue? {
        if body.isEmpty { return nil }
        guard let coding = ContentCoding(header: headers["Content-Encoding"]) else { return .object(form(of: body)) }
        switch coding.decoding(body) {
        case .decoded(let content):
            var object = form(of: content)
            object["encoding"] = .string(coding.rawValue)
            return .object(object)
        case .tooLarge:
            var object = form(of: body)
            object["undecoded"] = .string(undecodedNote(coding))
            return .object(object)
        case .invalid:
            return .object(form(of: body))
        }
    }

    /// Why a body is stored as sent though its coding is one Kakapo decodes.
    static func undecodedNote(_ coding: ContentCoding) -> String {
        "kept \(coding.rawValue)-encoded as sent: it decodes to more than \(ContentCoding.maximumDecodedBytes >> 20) MiB"
    }

    /// The most readable form that gives back exactly `content`.
    static func form(of content: [UInt8]) -> JSONObject {
        if let json = readableJSON(content) { return json }
        if isReadableText(content), let text = String(validating: content, as: UTF8.self) {
            return ["text": .string(text)]
        }
        return ["base64": .string(Data(content).base64EncodedString())]
    }

    static func readableJSON(_ content: [UInt8]) -> JSONObject? {
        guard JSONParser.looksLikeContainer(content),
            let value = try? JSONParser.parse(content, options: .init(rejectDuplicateKeys: true, maximumDepth: 64)),
            let layout = JSONLayout.detect(content, value: value)
        else { return nil }
        var object: JSONObject = ["json": value]
        if layout.indent != nil || layout.itemSeparator != "," { object["layout"] = .string(layout.description) }
        if layout.trailingNewline { object["newline"] = true }
        return object
    }

    static func decode(_ value: JSONValue?, path: [JSONPathComponent]) throws(CassetteDecodingError) -> [UInt8] {
        guard let value, !value.isNull else { return [] }
        guard let object = value.objectValue else {
            throw CassetteDecodingError(
                path: path,
                message:
                    "a body must be an object with \"json\", \"text\" or \"base64\", found \(value.kindDescription)")
        }
        var content: [UInt8]
        if let json = object["json"] {
            var layout = JSONLayout.compact
            if let name = object["layout"] {
                guard let text = name.stringValue, let parsed = JSONLayout(name: text) else {
                    throw CassetteDecodingError(
                        path: path + [.key("layout")],
                        message: "\"layout\" must be \"compact\", \"spaced\", \"indent:N\" or \"indent:tab\"")
                }
                layout = parsed
            }
            if let newline = object["newline"] {
                guard let flag = newline.boolValue else {
                    throw CassetteDecodingError(
                        path: path + [.key("newline")], message: "\"newline\" must be true or false")
                }
                layout.trailingNewline = flag
            }
            content = layout.write(json)
        } else if let text = object["text"] {
            guard let string = text.stringValue else {
                throw CassetteDecodingError(
                    path: path + [.key("text")], message: "\"text\" must be a string, found \(text.kindDescription)")
            }
            content = Array(string.utf8)
        } else if let base64 = object["base64"] {
            guard let string = base64.stringValue else {
                throw CassetteDecodingError(
                    path: path + [.key("base64")],
                    message: "\"base64\" must be a string, found \(base64.kindDescription)")
            }
            guard let data = Data(base64Encoded: string) else {
                throw CassetteDecodingError(path: path + [.key("base64")], message: "\"base64\" is not valid base64")
            }
            content = Array(data)
        } else {
            throw CassetteDecodingError(path: path, message: "a body must have \"json\", \"text\" or \"base64\"")
        }
        if let encoding = object["encoding"] {
            guard let name = encoding.stringValue, let coding = ContentCoding(rawValue: name) else {
                throw CassetteDecodingError(
                    path: path + [.key("encoding")],
                    message: "\"encoding\" must be \"gzip\", \"deflate\", \"br\" or \"zstd\"")
            }
            content = coding.encode(content)
        }
        return content
    }

    /// True for bytes a person can read and edit: no control characters but tab, carriage return and
    /// line feed.
    static func isReadableText(_ body: [UInt8]) -> Bool {
        for byte in body where byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D || byte == 0x7F {
            return false
        }
        return true
    }
}
