import Foundation

/// Every header list the check runs: each request and response head of every cassette in the repository,
/// then hand-made heads holding the fields real servers and clients send that trip up strict parsers.
enum FieldCorpus {
    /// The folders searched for cassettes, relative to the repository root.
    static let folders = ["cassettes", "Examples", "Tests", "tools/fuzz/corpus/cassette"]

    /// The cassettes' heads; `skipped` names the JSON files that are not cassettes (or not valid ones).
    /// A cassette's headers are arrays of `[name, value]` in order (cassettes/README.md), read here with
    /// JSONSerialization rather than KakapoCassette, so the check builds whatever state the proxy is in.
    static func cassetteLists(root: String) -> (lists: [FieldList], cassettes: Int, skipped: [String]) {
        var lists: [FieldList] = []
        var cassettes = 0
        var skipped: [String] = []
        for path in jsonFiles(root: root) {
            guard let data = FileManager.default.contents(atPath: root + "/" + path),
                let file = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let interactions = file["interactions"] as? [[String: Any]]
            else {
                skipped.append(path)
                continue
            }
            cassettes += 1
            for (index, interaction) in interactions.enumerated() {
                for (part, isRequest) in [("request", true), ("response", false)] {
                    let head = interaction[part] as? [String: Any]
                    let pairs = head?["headers"] as? [[String]] ?? []
                    lists.append(
                        FieldList(
                            source: "\(path)#\(index) \(part)", isRequest: isRequest,
                            fields: pairs.filter { $0.count == 2 }.map { RawField($0[0], $0[1]) }))
                }
            }
        }
        return (lists, cassettes, skipped)
    }

    private static func jsonFiles(root: String) -> [String] {
        var paths: [String] = []
        for folder in folders {
            guard let walker = FileManager.default.enumerator(atPath: root + "/" + folder) else { continue }
            while let entry = walker.nextObject() as? String {
                if entry.hasSuffix(".json") && !entry.contains(".build") { paths.append(folder + "/" + entry) }
            }
        }
        return paths.sorted()
    }

    /// Fields that real traffic holds and that a byte-exact replay must keep, one head of each kind.
    static let trickyLists: [FieldList] = [
        FieldList(
            source: "tricky request", isRequest: true,
            fields: [
                // Java's HttpURLConnection sends User-Agent before Host.
                RawField("User-Agent", "Java/21.0.2"),
                RawField("host", "api.example.com"),
                RawField("X-UPPER-CASE", "1"),
                RawField("x_underscore_name", "1"),
                RawField("Cookie", "a=1"),
                RawField("Cookie", "b=2"),
                RawField("X-Empty", ""),
                RawField("X-Padded", "  two spaces each side  "),
                RawField("Bad Name", "a space in the name"),
                RawField("X-Paren(1)", "a ( in the name"),
            ]),
        FieldList(
            source: "tricky response", isRequest: false,
            fields: [
                RawField("Server", "tricky/1.0"),
                RawField(Array("Content-Disposition".utf8), Array("attachment; filename=\"caf".utf8) + [0xE9] + Array(".txt\"".utf8)),
                RawField("X-UTF8", "café ✓"),
                RawField("Set-Cookie", "a=1; Path=/"),
                RawField("Set-Cookie", "b=2; Path=/; HttpOnly"),
                RawField("X-Empty", ""),
                RawField("X-Trailing-Space", "value "),
                RawField(Array("X-Bare-CR".utf8), Array("a".utf8) + [0x0D] + Array("b".utf8)),
                RawField(Array("X-NUL".utf8), Array("a".utf8) + [0x00] + Array("b".utf8)),
                RawField("X-Tab", "a\tb"),
                RawField("x-lower-case", "1"),
                RawField("WWW-Authenticate", "Basic realm=\"x\""),
            ]),
    ]
}
