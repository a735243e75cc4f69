import KakapoHTTP
import KakapoUpstream

extension RecordFilter.Pattern {
    /// The path part of a pattern: segments to match as written, `*` for exactly one segment and `**` for
    /// any number of them. Kept as the runs between `**`s, so matching needs no backtracking: the first run
    /// must start the path, the last one end it, and each run between goes at its first place after the one
    /// before (taking the first place never loses a match another place would find).
    struct PathGlob: Hashable {
        enum Segment: Hashable {
            /// This segment, escapes in the spelling matching uses.
            case literal(String)
            /// Any one segment.
            case one
        }

        /// The segments before the first `**` (all of them when there is none).
        let head: [Segment]
        /// The runs between two `**`s, in order.
        let middle: [[Segment]]
        /// The segments after the last `**`; nil when there is no `**`.
        let tail: [Segment]?

        /// Parses `path` (it starts with `/`).
        init(_ path: Substring, failure: (String) -> RecordFilter.PatternError) throws(RecordFilter.PatternError) {
            let parts = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count <= RecordFilter.Pattern.segmentLimit else {
                throw failure(
                    "a path may have at most \(RecordFilter.Pattern.segmentLimit) segments, not \(parts.count)")
            }
            var runs: [[Segment]] = [[]]
            for part in parts {
                switch part {
                case "**":
                    // `**/**` is one `**`.
                    if !(runs.count > 1 && runs[runs.count - 1].isEmpty) { runs.append([]) }
                case "*":
                    runs[runs.count - 1].append(.one)
                default:
                    guard !part.contains("*") else {
                        throw failure(
                            "\"\(part)\": * stands for a whole segment (/users/*/posts) and ** for any number of them (/v1/**); neither may stand inside a segment"
                        )
                    }
                    let literal = String(part).percentEncodingNormalized()
                    guard literal != "." && literal != ".." else {
                        throw failure(
                            "\"\(part)\": request paths are matched with their dot-segments resolved, as they go upstream: give the path that . and .. lead to"
                        )
                    }
                    runs[runs.count - 1].append(.literal(literal))
                }
            }
            head = runs[0]
            if runs.count == 1 {
                middle = []
                tail = nil
            } else {
                middle = Array(runs[1..<(runs.count - 1)])
                tail = runs[runs.count - 1]
            }
        }

        /// The ways the upstream may read the path of a request `target` (`/path?query` or with a
        /// `#fragment`), each as segments in the spelling matching uses. First the path libcurl sends: up to
        /// the first `?` or `#`, its `.` and `..` segments resolved. Then, when that path still spells a
        /// dot-segment in a way libcurl sends as it is but many servers resolve (`%2e` for a dot, `%2f`,
        /// `%5c` or `\` for the `/` before it), that path with those resolved too. Then each of those as a
        /// server that merges slashes and drops `;` parameters reads it (`lenientReading`), when that differs.
        /// Linear in the target.
        static func readings(of target: String) -> [[Substring]] {
            let strict = strictReadings(of: target)
            var all = strict
            for reading in strict {
                if let lenient = lenientReading(reading), !all.contains(lenient) { all.append(lenient) }
            }
            return all
        }

        /// How a server that merges slashes (nginx's `merge_slashes`, Python's http.server) and drops path
        /// parameters (`/live;jsessionid=1/x`, read by Tomcat and Jetty as `/live/x`) reads `segments`: empty
        /// segments go (a trailing one stays), each segment loses what follows its first `;`, and the
        /// dot-segments that leaves (`/..;/`) are resolved. Nil when that changes nothing.
        private static func lenientReading(_ segments: [Substring]) -> [Substring]? {
            guard segments.dropLast().contains(where: \.isEmpty) || segments.contains(where: { $0.contains(";") })
            else { return nil }
            var kept: [Substring] = []
            for (index, segment) in segments.enumerated() {
                let bare = segment.prefix { $0 != ";" }
                if bare.isEmpty && index != segments.count - 1 { continue }
                kept.append(bare)
            }
            return resolvingDotSegments(kept)
        }

        /// `readings(of:)` before merging slashes and dropping parameters.
        private static func strictReadings(of target: String) -> [[Substring]] {
            let end = target.utf8.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? target.endIndex
            let sent = "/" + resolvingDotSegments(segments(of: target[..<end])).joined(separator: "/")
            let asSent = segments(of: sent.percentEncodingNormalized()[...])
            guard sent.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "\\") }) else {
                return [asSent]
            }
            let decoded = segments(
                of: String(decoding: UpstreamURL.separatorsAndDotsDecoded(sent.utf8), as: UTF8.self)[...])
            guard decoded.contains(where: isDotSegment) else { return [asSent] }
            let resolved = "/" + resolvingDotSegments(decoded).joined(separator: "/")
            return [asSent, segments(of: resolved.percentEncodingNormalized()[...])]
        }

        /// The segments of `path`, after its leading `/`.
        private static func segments(of path: Substring) -> [Substring] {
            (path.hasPrefix("/") ? path.dropFirst() : path).split(separator: "/", omittingEmptySubsequences: false)
        }

        /// Whether `segment` is `.` or `..`.
        private static func isDotSegment(_ segment: Substring) -> Bool {
            segment == "." || segment == ".."
        }

        /// A path's `segments` with its dot-segments resolved as RFC 3986 section 5.2.4 (remove_dot_segments)
        /// and libcurl resolve them: `.` goes, `..` goes with the segment before it (none above the root),
        /// and a path ending in either keeps its trailing `/`. Linear in the segments.
        private static func resolvingDotSegments(_ segments: [Substring]) -> [Substring] {
            var resolved: [Substring] = []
            resolved.reserveCapacity(segments.count)
            for (index, segment) in segments.enumerated() {
                guard isDotSegment(segment) else {
                    resolved.append(segment)
                    continue
                }
                if segment == "..", !resolved.isEmpty { resolved.removeLast() }
                if index == segments.count - 1 { resolved.append("") }
            }
            return resolved
        }

        /// Whether a path of these segments matches.
        func matches(_ path: [Substring]) -> Bool {
            guard let tail else { return path.count == head.count && Self.run(head, matches: path[...]) }
            guard path.count >= head.count + tail.count, Self.run(head, matches: path.prefix(head.count)),
                Self.run(tail, matches: path.suffix(tail.count))
            else { return false }
            var start = head.count
            let end = path.count - tail.count
            for run in middle {
                guard let found = Self.first(run, in: path, from: start, to: end) else { return false }
                start = found + run.count
            }
            return true
        }

        /// Where `run` first matches within `path[from..<to]`, or nil.
        private static func first(_ run: [Segment], in path: [Substring], from: Int, to end: Int) -> Int? {
            var start = from
            while start + run.count <= end {
                if Self.run(run, matches: path[start..<(start + run.count)]) { return start }
                start += 1
            }
            return nil
        }

        /// Whether `segments` (as many as `run` has) match `run`, one by one.
        private static func run(_ run: [Segment], matches segments: ArraySlice<Substring>) -> Bool {
            for (segment, part) in zip(run, segments) {
                if case .literal(let literal) = segment, part != literal { return false }
            }
            return true
        }
    }
}
