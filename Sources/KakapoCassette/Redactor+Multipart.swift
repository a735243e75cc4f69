/// `multipart/*` bodies (issue 42), read as forms are: a part whose name is credential-shaped
/// (`Content-Disposition: form-data; name="client_secret"`) has its content replaced by the placeholder, a
/// text part's secret-shaped values are replaced (whole in a request, as a form field's), and a file part's
/// are masked at their own length. Boundaries, part headers and every other byte are kept.
extension Redactor {
    /// The boundary a multipart content type (lowercased or not) names, or nil.
    static func multipartBoundary(_ contentType: String) -> [UInt8]? {
        guard contentType.lowercased().hasPrefix("multipart/") else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingSpaces().lowercased() == "boundary" else { continue }
            var value = Substring(pair[1].trimmingSpaces())
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
            guard !value.isEmpty, value.utf8.count <= 200 else { return nil }
            return Array(value.utf8)
        }
        return nil
    }

    /// The multipart `body` with its secrets replaced, or nil when nothing in it is secret (or it is not
    /// multipart with a boundary). `secrets` gathers the values of secret parts (for echoes).
    func redactMultipart(
        _ body: [UInt8], contentType: String, side: Side, secrets: inout Set<String>, noting redacted: inout [String]
    ) -> [UInt8]? {
        guard let boundary = Self.multipartBoundary(contentType) else { return nil }
        let delimiter = Array("--".utf8) + boundary
        let next = Array("\r\n--".utf8) + boundary
        let headerEnd = Array("\r\n\r\n".utf8)
        var replacements: [(Range<Int>, [UInt8])] = []
        guard var start = Self.firstOccurrence(of: delimiter, in: body, from: 0) else { return nil }
        while true {
            // After the delimiter: `--` ends the body, a line end starts a part.
            var cursor = start + delimiter.count
            if body[cursor...].starts(with: "--".utf8) { break }
            guard let lineEnd = Self.firstOccurrence(of: Array("\r\n".utf8), in: body, from: cursor) else { break }
            cursor = lineEnd + 2
            guard let headersEnd = Self.firstOccurrence(of: headerEnd, in: body, from: cursor),
                let end = Self.firstOccurrence(of: next, in: body, from: headersEnd + 4)
            else { break }
            let headers = String(decoding: body[cursor..<headersEnd], as: UTF8.self)
            let content = (headersEnd + 4)..<end
            replacements += redactPart(
                body, content, headers: headers, side: side, secrets: &secrets, noting: &redacted)
            start = end + 2
        }
        guard !replacements.isEmpty else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(body.count)
        var copied = 0
        for (range, replacement) in replacements {
            output += body[copied..<range.lowerBound]
            output += replacement
            copied = range.upperBound
        }
        output += body[copied...]
        return output
    }

    private func redactPart(
        _ body: [UInt8], _ content: Range<Int>, headers: String, side: Side, secrets: inout Set<String>,
        noting redacted: inout [String]
    ) -> [(Range<Int>, [UInt8])] {
        guard !content.isEmpty else { return [] }
        let placeholder = Array(Self.placeholder.utf8)
        let bytes = Array(body[content])
        guard !bytes.elementsEqual(placeholder) else { return [] }
        let name = Self.parameter("name", of: headers)
        let isFile = Self.parameter("filename", of: headers) != nil
        if let name, isSecretQueryParameter(name) {
            redacted.append(name)
            secrets.insert(String(decoding: bytes, as: UTF8.self))
            return [(content, isFile ? Self.mask(count: bytes.count) : placeholder)]
        }
        guard byShape, !(name.map(isKept) ?? false), CredentialValues.mightHoldCredential(bytes) else { return [] }
        let partType = Self.parameter("content-type", of: headers, header: true)?.lowercased() ?? ""
        if isFile || !Self.isText(partType) {
            var kinds: [String] = []
            guard let masked = maskBinary(bytes, noting: &kinds) else { return [] }
            redacted += kinds
            return [(content, masked)]
        }
        let spans = CredentialValues.spans(in: bytes)
        guard !spans.isEmpty else { return [] }
        for span in spans {
            redacted.append(span.kind)
            secrets.insert(String(decoding: bytes[span.range], as: UTF8.self))
        }
        if side == .request { return [(content, placeholder)] }
        var kinds: [String] = []
        return [(content, CredentialValues.redacting(bytes, noting: &kinds) ?? bytes)]
    }

    /// A parameter of the part's `Content-Disposition` (`name`, `filename`), or with `header` the value of
    /// a header line (`content-type`).
    private static func parameter(_ wanted: String, of headers: String, header: Bool = false) -> String? {
        for line in headers.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let field = line[..<colon].trimmingSpaces().lowercased()
            let value = line[line.index(after: colon)...]
            if header {
                if field == wanted { return value.split(separator: ";").first.map { String($0.trimmingSpaces()) } }
                continue
            }
            guard field == "content-disposition" else { continue }
            for item in value.split(separator: ";").dropFirst() {
                let pair = item.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingSpaces().lowercased() == wanted else { continue }
                var text = Substring(pair[1].trimmingSpaces())
                if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = text.dropFirst().dropLast() }
                return String(text)
            }
        }
        return nil
    }

    /// A live multipart request body as recording redacts it, for comparing with a recorded one.
    func multipartForMatching(_ body: [UInt8], contentType: String) -> [UInt8] {
        var secrets: Set<String> = []
        var kinds: [String] = []
        return redactMultipart(body, contentType: contentType, side: .request, secrets: &secrets, noting: &kinds)
            ?? body
    }
}
