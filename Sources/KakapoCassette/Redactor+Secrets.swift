import KakapoHTTP
import KakapoJSON

/// The secrets an interaction carries, found to be replaced wherever else they appear (its echoes), and
/// the byte searches that replace them.
extension Redactor {
    /// The secret values an interaction carries, longest first, that are long enough to be found safely
    /// (six bytes: a shorter value, such as `auth=none`, would be replaced in every word that holds it).
    func secrets(in interaction: Interaction) -> [[UInt8]] {
        var values: Set<String> = []
        for field in interaction.request.headers {
            guard isSecretHeader(field.name) else {
                if byShape && !isKept(field.name) { values.formUnion(CredentialValues.values(in: field.value)) }
                if field.name.lowercased() == "sec-websocket-protocol" {
                    values.formUnion(subprotocolCredentials(in: field.value).map { String($0.secret) })
                }
                continue
            }
            let lowered = field.name.lowercased()
            if lowered == "cookie" {
                values.formUnion(Self.pairValues(field.value, keepAttributes: false))
            } else {
                values.insert(field.value)
                // `Bearer abc`: the credential alone may be echoed too.
                if let space = field.value.firstIndex(of: " ") {
                    values.insert(field.value[field.value.index(after: space)...].trimmingSpaces())
                }
            }
        }
        for field in interaction.response.headers
        where field.name.lowercased() == "set-cookie" && isSecretHeader(field.name) {
            values.formUnion(Self.pairValues(field.value, keepAttributes: true))
        }
        var pairs = interaction.request.queryItems
        let contentType = interaction.request.headers["Content-Type"]?.lowercased() ?? ""
        let isForm = contentType.hasPrefix("application/x-www-form-urlencoded")
        let isMultipart = contentType.hasPrefix("multipart/")
        // Decoded once, for the body kinds read below as content (a form, multipart, XML).
        let content =
            isForm || isMultipart || Self.isXML(contentType: contentType, interaction.request.body)
            ? ContentCoding.decoding(interaction.request.body, headers: interaction.request.headers).content : []
        if isForm { pairs += QueryItem.parse(String(decoding: content, as: UTF8.self)) }
        for item in pairs {
            guard let value = item.value else { continue }
            let name = item.name.removingPercentEncodingLeniently()
            let plain = value.removingPercentEncodingLeniently()
            if isSecretQueryParameter(name) {
                values.insert(value)
                values.insert(plain)
                // A form field echoed in JSON: `+` is a space there.
                values.insert(Self.spaced(value))
            } else if byShape && !isKept(name) {
                values.formUnion(CredentialValues.values(in: plain))
            }
        }
        if readsEveryBody
            || (byShape && CredentialValues.mightHoldCredential(interaction.request.body)),
            JSONParser.looksLikeContainer(interaction.request.body),
            let json = try? JSONParser.parse(interaction.request.body)
        {
            for pointer in jsonPointers {
                if let value = json[pointer: pointer]?.stringValue { values.insert(value) }
            }
            if byShape || allowlist != nil || !names.isEmpty { collectSecrets(in: json, name: nil, into: &values) }
        }
        var ignored: [String] = []
        if isMultipart {
            _ = redactMultipart(
                content, contentType: interaction.request.headers["Content-Type"] ?? "", side: .request,
                secrets: &values, noting: &ignored)
        } else if !content.isEmpty, Self.isXML(contentType: contentType, content) {
            _ = redactXML(content, side: .request, secrets: &values, noting: &ignored)
        }
        if let conversation = interaction.webSocket { values.formUnion(secrets(in: conversation)) }
        values.remove(Redactor.placeholder)
        return values.filter { $0.utf8.count >= 6 }.sorted { $0.utf8.count > $1.utf8.count }.map { Array($0.utf8) }
    }

    /// Whether a member's value holds credentials in its members (`auth`, `credentials`), by its name.
    func holdsCredentials(_ name: String) -> Bool {
        byShape && allowlist == nil && !isKept(name) && CredentialNames.holdsCredentials(name)
    }

    /// The string values of secret members (and secret-shaped strings) of a request's JSON.
    func collectSecrets(in json: JSONValue, name: String?, into values: inout Set<String>) {
        var path: [String] = []
        forEachSecret(in: json, name: name, path: &path) { text, _, shaped in
            if shaped {
                values.formUnion(CredentialValues.values(in: text))
            } else {
                values.insert(text)
            }
        }
    }

    /// Calls `found` with each string of a request's JSON that is secret or may hold secret-shaped parts,
    /// the members and indices that lead to it (`path`, kept as the walk goes), and whether only its
    /// shaped parts are secret (false: its member's name, or a member holding credentials above it, makes
    /// the whole string secret).
    func forEachSecret(
        in json: JSONValue, name: String?, inside: Bool = false, path: inout [String],
        _ found: (String, [String], Bool) -> Void
    ) {
        switch json {
        case .object(let object):
            for member in object.members {
                path.append(member.key)
                forEachSecret(
                    in: member.value, name: member.key, inside: inside || holdsCredentials(member.key), path: &path,
                    found)
                path.removeLast()
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                path.append(String(index))
                forEachSecret(in: element, name: name, inside: inside, path: &path, found)
                path.removeLast()
            }
        case .string(let text):
            if let name,
                isSecretField(name) || (inside && !isKept(name) && !CredentialNames.describesCredential(name))
            {
                found(text, path, false)
            } else if byShape && !(name.map(isKept) ?? false) {
                found(text, path, true)
            }
        default:
            break
        }
    }

    func replace(_ search: EchoSearch, in headers: HTTP.Headers, count: inout Int) -> HTTP.Headers {
        var result = HTTP.Headers()
        for field in headers {
            result.add(
                name: field.name,
                value: String(decoding: search.replace(in: Array(field.value.utf8), count: &count), as: UTF8.self))
        }
        return result
    }

    /// Every occurrence of each secret replaced by the placeholder, in one pass (`EchoSearch`).
    static func replace(_ secrets: [[UInt8]], in bytes: [UInt8], count: inout Int) -> [UInt8] {
        EchoSearch(secrets).replace(in: bytes, count: &count)
    }

    /// Where `needle` (not empty) first occurs in `haystack` at or after `start`.
    package static func firstOccurrence(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        let last = haystack.count - needle.count
        guard start <= last else { return nil }
        return haystack.withUnsafeBufferPointer { buffer in
            needle.withUnsafeBufferPointer { pattern in
                let first = pattern[0]
                var index = start
                while index <= last {
                    if buffer[index] == first {
                        var offset = 1
                        while offset < pattern.count && buffer[index + offset] == pattern[offset] { offset += 1 }
                        if offset == pattern.count { return index }
                    }
                    index += 1
                }
                return nil
            }
        }
    }
}
