import KakapoHTTP

/// What chose a recorded answer besides the request's key and body: the range it asked for, the
/// validators a `304` or `412` was recorded for, the request headers the response's `Vary` names, and the
/// content-coding the response is in. A recording answers only a request that asks for the same
/// representation (`MatchOptions.matchRange`, `matchConditional`, `matchVary`).
///
/// Nil (`Representation(request:response:…)` returns none) for the usual recording, a plain answer to a
/// plain request: checking one then costs one header lookup, for `Range`.
struct Representation: Hashable, Sendable {
    /// A request header and the value a recording was made with; nil when the request had none.
    struct Header: Hashable, Sendable {
        /// Lowercased.
        let name: String
        let value: String?
    }

    /// The recorded request's `Range`, normalised (`normalized(_:)`), when ranges are matched.
    let range: String?
    /// The recorded request's `If-Range`, for a ranged recording.
    let ifRange: String?
    /// For a `304` or `412`: the recorded request's validators, one per `validatorNames`.
    let validators: [Header]
    /// The headers `Vary` names (but `Accept-Encoding`, see `codings`, and secret headers), by name.
    let varied: [Header]
    /// The content-codings (lowercased) a request must accept: those of the response that the recorded
    /// request accepted, when Kakapo cannot decode the body for a client that does not (br, zstd, or
    /// codings stacked). One the recorded request did not ask for was sent regardless, and replays as it
    /// was recorded.
    let codings: [String]
    /// The recorded request's `Accept-Encoding`, for the miss report.
    let recordedAcceptEncoding: String?
    /// Date validators match any date (`MatchOptions.datesMoveWithClock`).
    let anyDate: Bool

    /// The headers whose values a `304` or `412` was chosen by.
    static let validatorNames = ["if-none-match", "if-modified-since", "if-match", "if-unmodified-since"]

    /// The representation a recording was made for, or nil when it is a plain answer to a plain request.
    init?(request: HTTP.Request, response: HTTP.Response, matching: MatchOptions, redactor: Redactor) {
        let headers = request.headers
        anyDate = matching.datesMoveWithClock
        range = matching.matchRange ? headers["Range"].map(Self.normalized) : nil
        ifRange = range == nil ? nil : headers["If-Range"].map(Self.normalized)
        if matching.matchConditional, response.status == 304 || response.status == 412 {
            validators = Self.validatorNames.map { Header(name: $0, value: Self.value(of: $0, in: headers)) }
        } else {
            validators = []
        }
        var varied: [Header] = []
        var codings: [String] = []
        if matching.matchVary {
            var names: [String] = []
            for field in response.headers where field.name.caseInsensitiveEquals("Vary") {
                for name in Self.listItems(field.value).map({ $0.lowercased() })
                where name != "*" && name != "accept-encoding" && !names.contains(name)
                    && !redactor.isSecretHeader(name)
                    && names.count < Self.variedLimit
                {
                    names.append(name)
                }
            }
            varied = names.sorted().map { Header(name: $0, value: Self.value(of: $0, in: headers)) }
            // One coding Kakapo decodes (gzip, deflate, br, zstd) is no miss: a client that does not accept it
            // gets the body decoded (ContentCoding.identityResponse). Bytes that do not decode in it (or past
            // the limit) are no better than an unknown coding: only a client that accepts it gets them.
            if let encoding = response.headers["Content-Encoding"],
                ContentCoding(header: encoding)?.decodesWithinLimit(response.body) != true
            {
                let accepted = headers["Accept-Encoding"]
                codings = Self.listItems(encoding).prefix(Self.variedLimit).map { $0.lowercased() }.filter {
                    $0 != "identity" && Self.accepts(accepted, $0)
                }
            }
        }
        self.varied = varied
        self.codings = codings
        recordedAcceptEncoding = codings.isEmpty ? nil : headers["Accept-Encoding"]
        if range == nil, validators.isEmpty, varied.isEmpty, codings.isEmpty { return nil }
    }

    /// How many names of one response's `Vary` (and codings of its `Content-Encoding`) are kept: a hostile
    /// answer cannot make every lookup long.
    static let variedLimit = 16

    /// Whether `request`, whose `Range` is `range` (nil when ranges are not matched or it has none), asks
    /// for this representation. `bodiless` (a `HEAD` answered from a `GET` recording) skips the codings:
    /// no body is sent.
    func admits(_ request: HTTP.Request, range liveRange: String?, bodiless: Bool) -> Bool {
        if let range {
            guard let liveRange, Self.normalized(liveRange) == range,
                request.headers["If-Range"].map(Self.normalized) == ifRange
            else { return false }
        } else if liveRange != nil {
            return false
        }
        for header in validators where !sameValidator(Self.value(of: header.name, in: request.headers), header) {
            return false
        }
        for header in varied where Self.value(of: header.name, in: request.headers) != header.value { return false }
        if !bodiless, !codings.isEmpty {
            let accepted = request.headers["Accept-Encoding"]
            for coding in codings where !Self.accepts(accepted, coding) { return false }
        }
        return true
    }

    /// What `request` asks for differently: `(header name, value here, value recorded, why)`, empty when
    /// it is admitted.
    func differences(from request: HTTP.Request, matching: MatchOptions) -> [(
        name: String, here: String?, recorded: String?, why: String?
    )] {
        var differences: [(name: String, here: String?, recorded: String?, why: String?)] = []
        let liveRange = matching.matchRange ? request.headers["Range"].map(Self.normalized) : nil
        if liveRange != range { differences.append(("range", liveRange, range, nil)) }
        if range != nil, liveRange == range {
            let liveIfRange = request.headers["If-Range"].map(Self.normalized)
            if liveIfRange != ifRange { differences.append(("if-range", liveIfRange, ifRange, nil)) }
        }
        for header in validators {
            let here = Self.value(of: header.name, in: request.headers)
            if !sameValidator(here, header) {
                differences.append(
                    (header.name, here, header.value, "the recording is a 304 for that validator"))
            }
        }
        for header in varied {
            let here = Self.value(of: header.name, in: request.headers)
            if here != header.value {
                differences.append((header.name, here, header.value, "the response varies by it"))
            }
        }
        let accepted = request.headers["Accept-Encoding"]
        if let coding = codings.first(where: { !Self.accepts(accepted, $0) }) {
            differences.append(
                ("accept-encoding", accepted, recordedAcceptEncoding, "the recorded response is \(coding)-encoded"))
        }
        return differences
    }

    /// Every value of `name` in `headers` as one normalised list; nil when there is none.
    /// Whether a request's validator `here` is the recorded one: the same value, or, for
    /// `If-Modified-Since` and `If-Unmodified-Since` while dates move with the clock, two dates (a replay moves
    /// the `Last-Modified` a client revalidates with to its own clock, `ReplayTime`, so the date a client sends
    /// back is not the recorded one).
    func sameValidator(_ here: String?, _ recorded: Header) -> Bool {
        if here == recorded.value { return true }
        guard anyDate, recorded.name.hasSuffix("modified-since"), let here, let value = recorded.value else {
            return false
        }
        return HTTPDate.parse(here) != nil && HTTPDate.parse(value) != nil
    }

    static func value(of name: String, in headers: HTTP.Headers) -> String? {
        let values = headers.values(for: name)
        return values.isEmpty ? nil : normalized(values.joined(separator: ","))
    }

    /// A comma-separated header value with the spaces and tabs around its items taken out
    /// (`bytes=0-3, 8-9` is `bytes=0-3,8-9`).
    static func normalized(_ value: String) -> String {
        listItems(value, keepingEmpty: true).joined(separator: ",")
    }

    /// The items of a comma-separated header value, trimmed; empty ones left out unless `keepingEmpty`.
    static func listItems(_ value: String, keepingEmpty: Bool = false) -> [String] {
        value.split(separator: ",", omittingEmptySubsequences: false).compactMap { item in
            let trimmed = item.trimmingSpaces()
            return trimmed.isEmpty && !keepingEmpty ? nil : String(trimmed)
        }
    }

    /// Whether an `Accept-Encoding` value (nil when the request had none: then only the identity) accepts
    /// `coding`: named with a weight above zero (`x-gzip` for `gzip`), or not named and `*` is.
    static func accepts(_ acceptEncoding: String?, _ coding: String) -> Bool {
        guard let acceptEncoding else { return false }
        var wildcard = false
        for item in listItems(acceptEncoding).prefix(64) {
            let parts = item.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingSpaces().lowercased()
            let weighted = parts.count < 2 || !isZeroWeight(parts[1])
            if name == coding || (coding == "gzip" && name == "x-gzip") || (coding == "x-gzip" && name == "gzip") {
                return weighted
            }
            if name == "*" { wildcard = weighted }
        }
        return wildcard
    }

    /// Whether parameters such as ` q=0.000` give the weight zero (`q=0`, `q=0.`, `q=0.0…`).
    static func isZeroWeight(_ parameters: Substring) -> Bool {
        for parameter in parameters.split(separator: ";") {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingSpaces().lowercased() == "q" else { continue }
            let weight = pair[1].trimmingSpaces()
            guard weight.first == "0" else { return false }
            return weight.dropFirst().allSatisfy { $0 == "." || $0 == "0" }
        }
        return false
    }
}
