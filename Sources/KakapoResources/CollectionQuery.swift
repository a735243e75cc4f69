import Foundation
import KakapoHTTP
import KakapoJSON
import KakapoRouter
import KakapoStubs

/// The list query json-server's users know, applied to the entities of a resource:
/// `?field=value` (repeat for any of several values; `a.b=value` for nested fields), `field_ne`,
/// `field_gte`, `field_lte`, `field_like` (a regular expression, any case, run by `LinearRegex` so a
/// client's pattern cannot stall the event loop), `_sort=a,b` with
/// `_order=asc,desc`, and `_page`/`_limit` with `X-Total-Count` and a `Link` header.
struct CollectionQuery {
    private enum Filter {
        case equals(String, [String])
        case notEquals(String, String)
        case atLeast(String, String)
        case atMost(String, String)
        case like(String, LinearRegex)
    }

    private var filters: [Filter] = []
    private var sort: [(field: String, descending: Bool)] = []
    private var page: Int?
    private var limit: Int?
    private let items: [QueryItem]

    /// The most query parameters, and the most `_sort` fields, one list request may carry: each costs work
    /// per entity (and repeated names are grouped), so their number is bounded like any number from outside.
    static let mostParameters = 256
    static let mostSortFields = 32

    /// Reads the query of `request`; throws a 400 for a malformed `_page`, `_limit` or `_like`, or for
    /// more than `mostParameters` parameters or `mostSortFields` sort fields.
    init(_ request: HTTP.Request) throws(HTTPError) {
        items = request.decodedQueryItems
        guard items.count <= CollectionQuery.mostParameters else {
            throw HTTPError(
                status: 400,
                message: "a list takes at most \(CollectionQuery.mostParameters) query parameters, not \(items.count)")
        }
        var equals: [(String, [String])] = []
        var sortFields: [String] = []
        var orders: [String] = []
        for item in items {
            let value = item.value ?? ""
            switch item.name {
            case "_sort": sortFields += value.split(separator: ",").map(String.init)
            case "_order": orders += value.split(separator: ",").map { $0.lowercased() }
            case "_page": page = try CollectionQuery.whole(value, "_page", in: 1...CollectionQuery.largestPage)
            case "_limit": limit = try CollectionQuery.whole(value, "_limit", in: 0...CollectionQuery.largestPage)
            case let name where name.hasSuffix("_ne"): filters.append(.notEquals(String(name.dropLast(3)), value))
            case let name where name.hasSuffix("_gte"): filters.append(.atLeast(String(name.dropLast(4)), value))
            case let name where name.hasSuffix("_lte"): filters.append(.atMost(String(name.dropLast(4)), value))
            case let name where name.hasSuffix("_like"):
                // The pattern comes from the client: it runs on the linear-time engine, never a backtracking one.
                do {
                    filters.append(.like(String(name.dropLast(5)), try LinearRegex(value, caseInsensitive: true)))
                } catch {
                    throw HTTPError(
                        status: 400,
                        message: "\(name) must be a regular expression (\(error.message)), not \"\(value)\"")
                }
            case let name where name.hasPrefix("_"):
                continue
            case let name:
                if let index = equals.firstIndex(where: { $0.0 == name }) {
                    equals[index].1.append(value)
                } else {
                    equals.append((name, [value]))
                }
            }
        }
        filters += equals.map { .equals($0.0, $0.1) }
        guard sortFields.count <= CollectionQuery.mostSortFields else {
            throw HTTPError(
                status: 400,
                message: "_sort takes at most \(CollectionQuery.mostSortFields) fields, not \(sortFields.count)")
        }
        for (index, field) in sortFields.enumerated() {
            let order = index < orders.count ? orders[index] : orders.last ?? "asc"
            guard order == "asc" || order == "desc" else {
                throw HTTPError(status: 400, message: "_order takes asc or desc, not \"\(order)\"")
            }
            sort.append((field, order == "desc"))
        }
    }

    /// The most `LinearRegex` steps the `_like` filters of one request may spend over a collection, so a
    /// request's work on the event loop is bounded whatever the size of the Store (a few tens of
    /// milliseconds in a release build, about 0.3 s in a debug one).
    static let patternBudget = 1_000_000

    /// The answer to a list request over `entities` (in store order); a 400 when the `_like` patterns
    /// would cost more than `patternBudget` over them.
    func respond(_ entities: [JSONValue], request: HTTP.Request) throws(HTTPError) -> HTTP.Response {
        var budget = CollectionQuery.patternBudget
        var selected: [JSONValue] = []
        for entity in entities {
            guard let accepted = accepts(entity, budget: &budget) else {
                throw HTTPError(
                    status: 400,
                    message:
                        "the _like patterns need more than \(CollectionQuery.patternBudget) steps over this collection; "
                        + "use a simpler pattern or narrow the list with other filters first")
            }
            if accepted { selected.append(entity) }
        }
        if !sort.isEmpty {
            selected = selected.enumerated().sorted { a, b in
                for (field, descending) in sort {
                    let order = CollectionQuery.compare(
                        CollectionQuery.field(field, of: a.element), CollectionQuery.field(field, of: b.element))
                    if order != 0 { return descending ? order > 0 : order < 0 }
                }
                return a.offset < b.offset
            }.map(\.element)
        }
        let total = selected.count
        var headers = HTTP.Headers()
        if page != nil || limit != nil {
            let perPage = limit ?? 10
            let current = page ?? 1
            let start = page == nil ? 0 : min(total, (current - 1) * perPage)
            selected = Array(selected[start..<min(total, start + perPage)])
            headers.add(name: "X-Total-Count", value: String(total))
            if page != nil && perPage > 0 {
                headers.add(
                    name: "Link",
                    value: links(
                        current: current, last: max(1, (total + perPage - 1) / perPage),
                        perPage: perPage, request: request))
            }
        }
        headers.add(name: "Content-Type", value: "application/json")
        return HTTP.Response(status: 200, headers: headers, body: JSONWriter().write(.array(selected)))
    }

    /// Whether `entity` passes every filter; nil when `budget` runs out.
    private func accepts(_ entity: JSONValue, budget: inout Int) -> Bool? {
        for filter in filters {
            let passes: Bool
            if case .like(let field, let regex) = filter {
                guard let text = CollectionQuery.text(CollectionQuery.field(field, of: entity)) else { return false }
                guard let matched = regex.matches(text, budget: &budget) else { return nil }
                passes = matched
            } else {
                passes = accepts(entity, filter)
            }
            if !passes { return false }
        }
        return true
    }

    /// Whether `entity` passes one filter other than `_like`.
    private func accepts(_ entity: JSONValue, _ filter: Filter) -> Bool {
        switch filter {
        case .equals(let field, let values):
            guard let text = CollectionQuery.text(CollectionQuery.field(field, of: entity)) else { return false }
            return values.contains(text)
        case .notEquals(let field, let value):
            return CollectionQuery.text(CollectionQuery.field(field, of: entity)) != value
        case .atLeast(let field, let value):
            guard let found = CollectionQuery.field(field, of: entity) else { return false }
            return CollectionQuery.compare(found, CollectionQuery.parse(value)) >= 0
        case .atMost(let field, let value):
            guard let found = CollectionQuery.field(field, of: entity) else { return false }
            return CollectionQuery.compare(found, CollectionQuery.parse(value)) <= 0
        case .like:
            return true  // matched with a budget in accepts(_:budget:)
        }
    }

    /// `<...?_page=1&_limit=10>; rel="first", ...`, keeping the other query parameters.
    private func links(current: Int, last: Int, perPage: Int, request: HTTP.Request) -> String {
        let (host, path) = RouterRegistry.hostAndPath(request)
        // The Host comes from the client: only a well-formed authority goes into the header, else the
        // links are relative.
        let base = (host.flatMap { CollectionQuery.isAuthority($0) ? "http://" + $0 : nil } ?? "") + path
        let others = items.filter { $0.name != "_page" && $0.name != "_limit" }.map {
            $0.name.percentEncodedForQuery() + "=" + ($0.value ?? "").percentEncodedForQuery()
        }
        func link(_ page: Int, _ rel: String) -> String {
            let query = (others + ["_page=\(page)", "_limit=\(perPage)"]).joined(separator: "&")
            return "<\(base)?\(query)>; rel=\"\(rel)\""
        }
        var parts = [link(1, "first")]
        if current > 1 { parts.append(link(min(current - 1, last), "prev")) }
        if current < last { parts.append(link(current + 1, "next")) }
        parts.append(link(last, "last"))
        return parts.joined(separator: ", ")
    }

    /// True for `host[:port]` as RFC 3986 writes it: a reg-name of unreserved characters, an IPv4 address
    /// or a bracketed IPv6 literal, and an optional port of digits. Nothing else may reach a `Link` header.
    static func isAuthority(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 261 else { return false }
        var hostEnd = bytes.count
        var rest = bytes[...]
        if bytes[0] == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")), close > 1 else { return false }
            let literal = bytes[1..<close]
            guard
                literal.allSatisfy({
                    isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".")
                })
            else { return false }
            hostEnd = close + 1
            rest = bytes[hostEnd...]
            guard rest.isEmpty || rest.first == UInt8(ascii: ":") else { return false }
        } else {
            if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) { hostEnd = colon }
            let name = bytes[..<hostEnd]
            guard !name.isEmpty,
                name.allSatisfy({
                    isHexDigit($0) || ($0 | 0x20 >= UInt8(ascii: "a") && $0 | 0x20 <= UInt8(ascii: "z"))
                        || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_")
                        || $0 == UInt8(ascii: "~")
                })
            else { return false }
            rest = bytes[hostEnd...]
        }
        guard !rest.isEmpty else { return true }
        let port = rest.dropFirst()  // what follows the colon
        return !port.isEmpty && port.count <= 5
            && port.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
    }

    /// The value at a dotted path (`author.name`, `tags.0`).
    static func field(_ path: String, of entity: JSONValue) -> JSONValue? {
        entity[pointer: JSONPointer(components: path.split(separator: ".").map(String.init))]
    }

    static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: return text
        case .number(let number)?: return number.literal
        case .bool(let flag)?: return flag ? "true" : "false"
        case .null?: return "null"
        default: return nil
        }
    }

    /// A query value as the JSON it most likely means: a number when it reads as one, else a string.
    static func parse(_ text: String) -> JSONValue {
        Double(text) != nil ? .number(JSONNumber(literal: text)) : .string(text)
    }

    /// Numbers by value, then strings, then booleans; missing values last.
    static func compare(_ a: JSONValue?, _ b: JSONValue?) -> Int {
        switch (a, b) {
        case (.number(let x)?, .number(let y)?):
            return x.compare(to: y)
        case (.string(let x)?, .string(let y)?): return x < y ? -1 : (x > y ? 1 : 0)
        case (nil, nil): return 0
        case (nil, _): return 1
        case (_, nil): return -1
        default:
            let (x, y) = (text(a) ?? "", text(b) ?? "")
            return x < y ? -1 : (x > y ? 1 : 0)
        }
    }

    /// The largest `_page` and `_limit`: their product (the first entity of a page) stays far from overflow.
    static let largestPage = 1_000_000_000

    private static func whole(_ text: String, _ name: String, in range: ClosedRange<Int>) throws(HTTPError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw HTTPError(
                status: 400,
                message:
                    "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"")
        }
        return value
    }
}
