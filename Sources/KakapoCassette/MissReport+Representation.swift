import KakapoHTTP

extension MissReport {
    /// The representation differences (`Representation`) between a request and the recording whose answer
    /// is `response`: the range, the validators of a `304`, the headers its `Vary` names, the coding it is
    /// in. Each is a line (`header range: bytes=0-4194303 here, bytes=8388608-16777215 recorded`) and a
    /// `header` field, and adds one to the score, as a header does.
    static func representationDifferences(
        _ recorded: HTTP.Request, response: HTTP.Response?, with request: HTTP.Request, redactor: Redactor,
        matching: MatchOptions, differences: inout [String], fields: inout [Field], score: inout Int
    ) {
        guard let response,
            let representation = Representation(
                request: recorded, response: response, matching: matching, redactor: redactor)
        else {
            // A plain recording: only a range asked for here differs.
            guard matching.matchRange, let range = request.headers["Range"].map(Representation.normalized) else {
                return
            }
            differences.append("header range: \(range) here, absent in the recording")
            fields.append(Field(.header, name: "range", here: range))
            score += 1
            return
        }
        for difference in representation.differences(from: request, matching: matching) {
            var line = "header \(difference.name): \(difference.here ?? "absent") here, "
            line += difference.recorded.map { "\($0) recorded" } ?? "absent in the recording"
            if let why = difference.why { line += " (\(why))" }
            differences.append(line)
            fields.append(Field(.header, name: difference.name, here: difference.here, recorded: difference.recorded))
            score += 1
        }
    }
}
