import KakapoHTTP

/// Shares equal header lists, and equal header names and values, between the interactions of one
/// cassette load: recordings made by one client to one API repeat the same fields, and a shared copy
/// costs one allocation instead of one per interaction. Bounded, so a cassette whose fields are all
/// different costs no more than it did. Used by one load at a time, never shared between threads.
final class HeaderInterner {
    private var lists: [HTTP.Headers: HTTP.Headers] = [:]
    private var strings: [String: String] = [:]
    private let limit: Int

    init(limit: Int = 4096) { self.limit = limit }

    /// `headers`, or an equal list seen before.
    func intern(_ headers: HTTP.Headers) -> HTTP.Headers {
        if headers.isEmpty { return headers }
        if let found = lists[headers] { return found }
        let shared = HTTP.Headers(
            headers.fields.map { HTTP.Headers.Field(name: intern($0.name), value: intern($0.value)) })
        if lists.count < limit { lists[shared] = shared }
        return shared
    }

    /// Strings of up to 15 UTF-8 bytes are stored inline and gain nothing; long ones (tokens, cookies)
    /// rarely repeat.
    private func intern(_ string: String) -> String {
        let length = string.utf8.count
        guard length > 15, length <= 256 else { return string }
        if let found = strings[string] { return found }
        if strings.count < limit { strings[string] = string }
        return string
    }
}
