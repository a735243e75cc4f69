import Foundation
import KakapoHTTP
import KakapoJSON

/// How a body is stored in a cassette: as readable text when it is UTF-8 text and not compressed,
/// otherwise as base64. An empty body is not stored at all.
enum BodyCoding {
    static func encode(_ body: [UInt8], headers: HTTPHeaders) -> JSONValue? {
        if body.isEmpty { return nil }
        let encoded =
            headers["Content-Encoding"].map { !$0.trimmingSpaces().caseInsensitiveEquals("identity") } ?? false
        if !encoded, isReadableText(body), let text = String(validating: body, as: UTF8.self) {
            return .object(["text": .string(text)])
        }
        return .object(["base64": .string(Data(body).base64EncodedString())])
    }

    static func decode(_ value: JSONValue?, path: [JSONPathComponent]) throws(CassetteDecodingError) -> [UInt8] {
        guard let value, !value.isNull else { return [] }
        guard let object = value.objectValue else {
            throw CassetteDecodingError(
                path: path,
                message: "a body must be an object with \"text\" or \"base64\", found \(value.kindDescription)")
        }
        if let text = object["text"] {
            guard let string = text.stringValue else {
                throw CassetteDecodingError(
                    path: path + [.key("text")], message: "\"text\" must be a string, found \(text.kindDescription)")
            }
            return Array(string.utf8)
        }
        if let base64 = object["base64"] {
            guard let string = base64.stringValue else {
                throw CassetteDecodingError(
                    path: path + [.key("base64")],
                    message: "\"base64\" must be a string, found \(base64.kindDescription)")
            }
            guard let data = Data(base64Encoded: string) else {
                throw CassetteDecodingError(path: path + [.key("base64")], message: "\"base64\" is not valid base64")
            }
            return Array(data)
        }
        throw CassetteDecodingError(path: path, message: "a body must have \"text\" or \"base64\"")
    }

    /// True for bytes a person can read and edit: valid UTF-8 with no control characters but tab,
    /// carriage return and line feed.
    static func isReadableText(_ body: [UInt8]) -> Bool {
        for byte in body where byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D || byte == 0x7F {
            return false
        }
        return true
    }
}
