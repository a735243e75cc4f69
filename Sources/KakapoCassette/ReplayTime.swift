import KakapoHTTP
import KakapoJSON

/// How a replay moves the recording's clock to now (design 5.6): `Date` is now; `Expires`, `Last-Modified`,
/// a `Retry-After` date and a `Set-Cookie`'s `Expires` keep their distance from the recorded `Date` (or,
/// without one, the time of recording) but from now; `Max-Age` and delays in seconds stay as they are.
/// Bodies are left alone but at the JSON pointers the user names (`--shift-time-json`), whose ISO 8601
/// strings and epoch seconds or milliseconds move the same distance. `keepsTime` replays the recorded values.
public struct ReplayTime: Sendable, Hashable {
    /// Replay the recorded times as they are (`--keep-time`).
    public var keepsTime: Bool
    /// Places in JSON bodies whose times move too; a component `*` stands for every member or element.
    public var jsonPointers: [JSONPointer]

    public init(keepsTime: Bool = false, jsonPointers: [JSONPointer] = []) {
        self.keepsTime = keepsTime
        self.jsonPointers = jsonPointers
    }

    /// Whether `moved` may change an answer with `headers`: false, cheaply, for one without dates (and with
    /// `keepsTime`), so most replays pass by without a clock or a lock.
    public func mayMove(_ headers: HTTP.Headers) -> Bool {
        guard !keepsTime else { return false }
        return !jsonPointers.isEmpty || headers.contains { Self.kind(of: $0.name) != nil }
    }

    /// The recorded response's headers and body with their times moved to `now` (seconds since 1970); nil
    /// when nothing moves (no time to move, no time to measure from, or `keepsTime`). `recordedAt` is the
    /// interaction's, used when the response has no readable `Date`.
    public func moved(
        headers: HTTP.Headers, body: [UInt8]?, recordedAt: String, now: Int64
    ) -> (headers: HTTP.Headers, body: [UInt8]?)? {
        guard !keepsTime else { return nil }
        // One pass finds the fields to move; most answers have only `Date`, or nothing.
        var dateIndex: Int?
        var moving: [(index: Int, kind: Kind)] = []
        for (index, field) in headers.fields.enumerated() {
            switch Self.kind(of: field.name) {
            case .date?: if dateIndex == nil { dateIndex = index }
            case let kind?: moving.append((index, kind))
            case nil: break
            }
        }
        let movesBody = body != nil && !jsonPointers.isEmpty
        guard dateIndex != nil || !moving.isEmpty || movesBody else { return nil }
        guard
            let reference = dateIndex.flatMap({ HTTPDate.parse(headers.fields[$0].value) })
                ?? ISOTime.parse(recordedAt)?.seconds
        else { return nil }
        let delta = now - reference
        var fields = headers.fields
        if let dateIndex { fields[dateIndex].value = HTTPDate.format(now) }
        for (index, kind) in moving {
            let field = fields[index]
            if kind == .cookie {
                fields[index].value = Self.movingCookieExpiry(field.value, by: delta)
            } else if let date = HTTPDate.parse(field.value) {
                // `Retry-After: 120` and `Expires: 0` are no dates: left as they are.
                fields[index].value = HTTPDate.format(date + delta)
            }
        }
        var movedBody: [UInt8]?
        if movesBody, let body, JSONParser.looksLikeContainer(body), var json = try? JSONParser.parse(body) {
            var changed = false
            for pointer in jsonPointers {
                json = Self.moving(json, at: pointer.components[...], by: delta, changed: &changed)
            }
            if changed { movedBody = JSONWriter().write(json) }
        }
        return (HTTP.Headers(fields), movedBody)
    }

    enum Kind { case date, dated, cookie }

    /// Which moving header `name` is, any case; nil for the rest.
    static func kind(of name: String) -> Kind? {
        switch name.utf8.count {
        case 4: return name.caseInsensitiveEquals("date") ? .date : nil
        case 7: return name.caseInsensitiveEquals("expires") ? .dated : nil
        case 10: return name.caseInsensitiveEquals("set-cookie") ? .cookie : nil
        case 11: return name.caseInsensitiveEquals("retry-after") ? .dated : nil
        case 13: return name.caseInsensitiveEquals("last-modified") ? .dated : nil
        default: return nil
        }
    }

    /// A `Set-Cookie` value with the date of each `Expires` attribute moved by `delta`, the rest as written.
    static func movingCookieExpiry(_ value: String, by delta: Int64) -> String {
        var parts = value.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        var changed = false
        for index in parts.indices.dropFirst() {
            let part = parts[index]
            guard let equals = part.firstIndex(of: "="),
                String(part[..<equals]).trimmingSpaces().caseInsensitiveEquals("expires"),
                let date = HTTPDate.parse(part[part.index(after: equals)...])
            else { continue }
            parts[index] = String(part[...equals]) + HTTPDate.format(date + delta)
            changed = true
        }
        return changed ? parts.joined(separator: ";") : value
    }

    /// `value` with the times at `components` (`*` for every member or element) moved by `delta`.
    static func moving(
        _ value: JSONValue, at components: ArraySlice<String>, by delta: Int64, changed: inout Bool
    ) -> JSONValue {
        guard let first = components.first else {
            guard let moved = movingTime(value, by: delta) else { return value }
            changed = true
            return moved
        }
        let rest = components.dropFirst()
        switch value {
        case .object(let object):
            var result = JSONObject()
            for (key, member) in object {
                result.append(
                    key: key,
                    value: first == "*" || first == key
                        ? moving(member, at: rest, by: delta, changed: &changed) : member)
            }
            return .object(result)
        case .array(let elements):
            var result = elements
            for index in elements.indices where first == "*" || first == String(index) {
                result[index] = moving(elements[index], at: rest, by: delta, changed: &changed)
            }
            return .array(result)
        default:
            return value
        }
    }

    /// A time moved by `delta`: an ISO 8601 string in its own layout, or epoch seconds (9 to 11 digits) or
    /// milliseconds (12 to 14), as a number or a string of digits; nil for anything else.
    static func movingTime(_ value: JSONValue, by delta: Int64) -> JSONValue? {
        switch value {
        case .string(let text):
            if let time = ISOTime.parse(text) { return .string(time.moved(by: delta).text) }
            return movingEpoch(text, by: delta).map(JSONValue.string)
        case .number(let number):
            return movingEpoch(number.literal, by: delta).map { .number(JSONNumber(literal: $0)) }
        default:
            return nil
        }
    }

    /// Epoch seconds or milliseconds written as digits (a fraction after a dot kept as it was), moved.
    static func movingEpoch(_ text: String, by delta: Int64) -> String? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        guard whole.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int64(whole) else { return nil }
        if parts.count == 2, parts[1].isEmpty || !parts[1].utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            return nil
        }
        let moved: Int64
        switch whole.utf8.count {
        case 9...11: moved = value + delta
        case 12...14: moved = value + delta * 1_000
        default: return nil
        }
        guard moved >= 0 else { return nil }
        return String(moved) + (parts.count == 2 ? "." + parts[1] : "")
    }
}
