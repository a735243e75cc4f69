/// XML and SOAP bodies, redacted as JSON bodies are (issue 42): the text of an element whose local name is
/// credential-shaped (`<SecretAccessKey>`, `<wsse:Password>`, `<client_secret>`, by the rules of JSON members,
/// namespace prefixes ignored), the value of such an attribute (`token="..."`), and credential-shaped values in
/// any text or attribute (a JWT, an AWS key id, a URL's password) are replaced in place. Everything else is kept
/// byte for byte, so the document stays well-formed and reads as before.
///
/// A streaming scan, not a parser: nothing is resolved (no external entity, no DTD, no entity reference is
/// ever expanded), comments and processing instructions are skipped, CDATA is text. A document deeper than
/// `maximumXMLDepth` elements, larger than `maximumXMLBytes`, or one the scan cannot follow (a tag never
/// closed) is not inspected: said as such, and its text is searched for credential shapes alone.
extension Redactor {
    /// What the scan of an XML body found.
    enum XMLOutcome: Equatable {
        /// Nothing in it is secret.
        case unchanged
        /// The body with its secrets replaced.
        case changed([UInt8])
        /// It was not read, for this reason.
        case notInspected(String)
    }

    /// The deepest nesting of elements scanned.
    static let maximumXMLDepth = 256
    /// The largest XML body scanned.
    static let maximumXMLBytes = 16 << 20

    /// Whether a body of this content type (lowercased), or with no content type, one that starts like XML,
    /// is read as XML. HTML is not XML.
    static func isXML(contentType: String, _ body: [UInt8]) -> Bool {
        if contentType.isEmpty || contentType.hasPrefix("text/plain") {
            guard let first = body.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) else {
                return false
            }
            return first == UInt8(ascii: "<") && body.starts(with: "<?xml".utf8)
        }
        return contentType.utf8.firstRange(of: "xml".utf8) != nil && !contentType.hasPrefix("text/html")
    }

    /// The XML `body` with its secrets replaced; the values of secret elements and attributes of a request are
    /// added to `secrets` (so that an answer that echoes them is cleaned too).
    func redactXML(
        _ body: [UInt8], side: Side, secrets: inout Set<String>, noting redacted: inout [String]
    ) -> XMLOutcome {
        guard body.count <= Self.maximumXMLBytes else {
            return .notInspected("an XML body larger than \(Self.maximumXMLBytes >> 20) MiB")
        }
        var scan = XMLScan(bytes: body, redactor: self, side: side)
        if let problem = scan.run() { return .notInspected(problem) }
        redacted += scan.kinds
        if side == .request { secrets.formUnion(scan.secrets) }
        guard !scan.replacements.isEmpty else { return .unchanged }
        var output: [UInt8] = []
        output.reserveCapacity(body.count)
        var copied = 0
        for (range, replacement) in scan.replacements {
            output += body[copied..<range.lowerBound]
            output += replacement
            copied = range.upperBound
        }
        output += body[copied...]
        return .changed(output)
    }

    /// A live request's XML body as recording redacts it, for comparing with a recorded one; the body itself
    /// when nothing in it is secret or it cannot be read.
    func xmlForMatching(_ body: [UInt8]) -> [UInt8] {
        var secrets: Set<String> = []
        var kinds: [String] = []
        if case .changed(let clean) = redactXML(body, side: .request, secrets: &secrets, noting: &kinds) {
            return clean
        }
        return body
    }
}

/// One pass over an XML document: the ranges to replace, in order, and what they were.
private struct XMLScan {
    let bytes: [UInt8]
    let redactor: Redactor
    let side: Redactor.Side
    var replacements: [(Range<Int>, [UInt8])] = []
    var kinds: [String] = []
    var secrets: Set<String> = []
    /// Whether each open element's text is secret: its local name is credential-shaped, or it sits inside an
    /// element that holds credentials (`<Credentials><SessionToken>`) and does not describe them.
    private var secretElements: [Bool] = []
    /// Whether each open element is, or is inside, one that holds credentials.
    private var insideCredentials: [Bool] = []
    private var names: [ArraySlice<UInt8>] = []
    private static let placeholder = Array(Redactor.placeholder.utf8)

    init(bytes: [UInt8], redactor: Redactor, side: Redactor.Side) {
        self.bytes = bytes
        self.redactor = redactor
        self.side = side
    }

    /// Scans the whole document; the reason it could not, or nil.
    mutating func run() -> String? {
        var index = 0
        let count = bytes.count
        while index < count {
            guard let open = find(UInt8(ascii: "<"), from: index) else {
                text(index..<count)
                break
            }
            text(index..<open)
            if starts("<!--", at: open) {
                guard let end = find("-->", from: open + 4) else { return "an XML comment is never closed" }
                index = end + 3
            } else if starts("<![CDATA[", at: open) {
                guard let end = find("]]>", from: open + 9) else { return "an XML CDATA section is never closed" }
                text((open + 9)..<end)
                index = end + 3
            } else if starts("<!", at: open) {
                // A DOCTYPE (with its internal subset) or another declaration: skipped, never resolved.
                guard let end = declarationEnd(from: open + 2) else { return "an XML declaration is never closed" }
                index = end + 1
            } else if starts("<?", at: open) {
                guard let end = find("?>", from: open + 2) else {
                    return "an XML processing instruction is never closed"
                }
                index = end + 2
            } else if starts("</", at: open) {
                guard let end = find(UInt8(ascii: ">"), from: open + 2) else { return "an XML end tag is never closed" }
                closeElement(named: trimmed((open + 2)..<end))
                index = end + 1
            } else {
                guard let end = startTag(at: open) else { return "an XML start tag is never closed" }
                if secretElements.count > Redactor.maximumXMLDepth {
                    return "XML nested deeper than \(Redactor.maximumXMLDepth) elements"
                }
                index = end
            }
        }
        return nil
    }

    /// Reads the start tag at `open` (its attributes redacted), opens its element unless it closes itself, and
    /// returns where the tag ends; nil when it never does.
    private mutating func startTag(at open: Int) -> Int? {
        var index = open + 1
        let nameStart = index
        while index < bytes.count, !isSpace(bytes[index]), bytes[index] != UInt8(ascii: ">"),
            bytes[index] != UInt8(ascii: "/")
        {
            index += 1
        }
        let name = bytes[nameStart..<index]
        while index < bytes.count {
            let byte = bytes[index]
            if isSpace(byte) {
                index += 1
            } else if byte == UInt8(ascii: ">") {
                openElement(named: name)
                return index + 1
            } else if byte == UInt8(ascii: "/") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: ">") { return index + 1 }
            } else {
                // An attribute: name, `=`, and a quoted value.
                let attributeStart = index
                while index < bytes.count, !isSpace(bytes[index]), bytes[index] != UInt8(ascii: "="),
                    bytes[index] != UInt8(ascii: ">"), bytes[index] != UInt8(ascii: "/")
                {
                    index += 1
                }
                let attribute = bytes[attributeStart..<index]
                while index < bytes.count, isSpace(bytes[index]) { index += 1 }
                guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { continue }
                index += 1
                while index < bytes.count, isSpace(bytes[index]) { index += 1 }
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'")
                else { continue }
                let quote = bytes[index]
                guard let close = find(quote, from: index + 1) else { return nil }
                attributeValue((index + 1)..<close, name: attribute)
                index = close + 1
            }
        }
        return nil
    }

    private mutating func openElement(named name: ArraySlice<UInt8>) {
        let local = String(decoding: localName(name), as: UTF8.self)
        let inside = insideCredentials.last == true
        names.append(name)
        secretElements.append(
            !local.isEmpty
                && (redactor.isSecretField(local)
                    || (inside && !redactor.isKept(local) && !CredentialNames.describesCredential(local)))
        )
        insideCredentials.append(inside || redactor.holdsCredentials(local))
    }

    /// Closes the innermost element of that name (and any left open inside it, as a lenient reader would).
    private mutating func closeElement(named name: ArraySlice<UInt8>) {
        guard let position = names.lastIndex(where: { $0.elementsEqual(name) }) else { return }
        names.removeSubrange(position...)
        secretElements.removeSubrange(position...)
        insideCredentials.removeSubrange(position...)
    }

    /// Text (or CDATA) inside the innermost open element.
    private mutating func text(_ range: Range<Int>) {
        guard let range = trimmedRange(range) else { return }
        if secretElements.last == true {
            replaceWhole(range, kind: names.last.map { String(decoding: localName($0), as: UTF8.self) } ?? "XML")
        } else {
            replaceShapes(in: range)
        }
    }

    private mutating func attributeValue(_ range: Range<Int>, name: ArraySlice<UInt8>) {
        guard !range.isEmpty else { return }
        let local = localName(name)
        // Namespace declarations name a namespace, whatever their prefix is called.
        if name.starts(with: "xmlns".utf8) { return }
        if isSecret(local) {
            replaceWhole(range, kind: String(decoding: local, as: UTF8.self))
        } else {
            replaceShapes(in: range)
        }
    }

    private func isSecret(_ local: ArraySlice<UInt8>) -> Bool {
        guard !local.isEmpty else { return false }
        return redactor.isSecretField(String(decoding: local, as: UTF8.self))
    }

    private mutating func replaceWhole(_ range: Range<Int>, kind: String) {
        guard !Redactor.isPlaceholder(bytes[range]) else { return }
        replacements.append((range, Self.placeholder))
        kinds.append(kind)
        secrets.insert(String(decoding: bytes[range], as: UTF8.self))
    }

    /// Credential-shaped values in a text: a request's whole text becomes the placeholder (so matching can
    /// leave it out, as for a JSON string), an answer's loses only the secret.
    private mutating func replaceShapes(in range: Range<Int>) {
        guard redactor.byShape else { return }
        let slice = Array(bytes[range])
        guard CredentialValues.mightHoldCredential(slice) else { return }
        let spans = CredentialValues.spans(in: slice)
        guard !spans.isEmpty else { return }
        for span in spans {
            kinds.append(span.kind)
            secrets.insert(String(decoding: slice[span.range], as: UTF8.self))
        }
        if side == .request {
            replacements.append((range, Self.placeholder))
            return
        }
        for span in spans {
            replacements.append(
                (
                    (range.lowerBound + span.range.lowerBound)..<(range.lowerBound + span.range.upperBound),
                    Self.placeholder
                ))
        }
    }

    // MARK: Bytes

    private func localName(_ name: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard let colon = name.lastIndex(of: UInt8(ascii: ":")) else { return name }
        return name[(colon + 1)...]
    }

    private func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    private func trimmedRange(_ range: Range<Int>) -> Range<Int>? {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, isSpace(bytes[lower]) { lower += 1 }
        while upper > lower, isSpace(bytes[upper - 1]) { upper -= 1 }
        return lower < upper ? lower..<upper : nil
    }

    private func trimmed(_ range: Range<Int>) -> ArraySlice<UInt8> {
        guard let inner = trimmedRange(range) else { return [] }
        return bytes[inner]
    }

    private func starts(_ prefix: StaticString, at index: Int) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        return prefix.withUTF8Buffer { bytes[index..<(index + count)].elementsEqual($0) }
    }

    private func find(_ byte: UInt8, from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        return bytes[start...].firstIndex(of: byte)
    }

    private func find(_ needle: StaticString, from start: Int) -> Int? {
        let pattern = needle.withUTF8Buffer { Array($0) }
        return Redactor.firstOccurrence(of: pattern, in: bytes, from: start)
    }

    /// The `>` that ends a declaration begun before `start`, past any `[...]` internal subset and quoted text.
    private func declarationEnd(from start: Int) -> Int? {
        var index = start
        var depth = 0
        var quote: UInt8?
        while index < bytes.count {
            let byte = bytes[index]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                depth += 1
            } else if byte == UInt8(ascii: "]") {
                depth = max(0, depth - 1)
            } else if byte == UInt8(ascii: ">") && depth == 0 {
                return index
            }
            index += 1
        }
        return nil
    }
}
