import Foundation
import Testing

/// Every link in the README and the guides resolves: relative files exist, and `#anchors` name a
/// heading of the target as GitHub slugs it.
@Suite("Documentation links")
struct DocsLinkTests {
    /// README.md and every `*.md` under docs/, cassettes/ and Examples/.
    static func markdownFiles() -> [String] {
        var files = ["README.md"]
        for folder in ["docs", "cassettes", "Examples"] {
            let root = CLITests.packageRoot + "/" + folder
            guard let walker = FileManager.default.enumerator(atPath: root) else { continue }
            while let path = walker.nextObject() as? String {
                if path.hasSuffix(".md") { files.append(folder + "/" + path) }
            }
        }
        return files.sorted()
    }

    @Test("the files it checks include the README and the guides")
    func coverage() {
        let files = Self.markdownFiles()
        #expect(files.contains("README.md"))
        #expect(files.contains("docs/cassettes.md"))
        #expect(files.contains("cassettes/README.md"))
    }

    @Test("every relative link and anchor resolves", arguments: markdownFiles())
    func linksResolve(file: String) throws {
        let text = try String(contentsOfFile: CLITests.packageRoot + "/" + file, encoding: .utf8)
        let folder = (file as NSString).deletingLastPathComponent
        var broken: [String] = []
        for (line, target) in MarkdownLinks.links(in: text) {
            if target.contains("://") || target.hasPrefix("mailto:") { continue }
            let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
            let path = String(parts[0])
            let anchor = parts.count > 1 ? String(parts[1]) : nil
            let resolved =
                path.isEmpty ? file : ((folder as NSString).appendingPathComponent(path) as NSString).standardizingPath
            var isDirectory: ObjCBool = false
            guard
                FileManager.default.fileExists(atPath: CLITests.packageRoot + "/" + resolved, isDirectory: &isDirectory)
            else {
                broken.append("\(file):\(line): \(target): no file \(resolved)")
                continue
            }
            guard let anchor, !isDirectory.boolValue, resolved.hasSuffix(".md") else { continue }
            let targetText = try String(contentsOfFile: CLITests.packageRoot + "/" + resolved, encoding: .utf8)
            let anchors = MarkdownLinks.anchors(in: targetText)
            if !anchors.contains(anchor) {
                broken.append("\(file):\(line): \(target): no heading with the anchor #\(anchor) in \(resolved)")
            }
        }
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }

    @Test("anchors are slugged as GitHub does")
    func slugs() {
        let text =
            "# Cassettes and matching\n## HAR in and out\n## Drift: are the recordings still true?\n"
            + "## `--proxy`, and every host\n```\n# not a heading\n```\n## Secrets\n## Secrets\n"
        #expect(
            MarkdownLinks.anchors(in: text) == [
                "cassettes-and-matching", "har-in-and-out", "drift-are-the-recordings-still-true",
                "--proxy-and-every-host", "secrets", "secrets-1",
            ])
        #expect(MarkdownLinks.links(in: "see [a](b.md#c) and `[x](y)`\n```\n[z](w)\n```\n").map(\.1) == ["b.md#c"])
    }
}

/// Links and heading anchors of a Markdown file, outside code.
enum MarkdownLinks {
    /// The lines of `text` outside fenced code blocks, numbered from 1, with inline code removed.
    static func prose(_ text: String) -> [(Int, String)] {
        var result: [(Int, String)] = []
        var fenced = false
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                fenced.toggle()
                continue
            }
            if !fenced { result.append((index + 1, String(line))) }
        }
        return result
    }

    /// `line` without its code spans (`` `[x](y)` `` is not a link).
    static func withoutCode(_ line: String) -> String {
        var output = ""
        var inCode = false
        for character in line {
            if character == "`" {
                inCode.toggle()
            } else if !inCode {
                output.append(character)
            }
        }
        return output
    }

    /// Every `[text](target)` link: its line and its target.
    static func links(in text: String) -> [(Int, String)] {
        var result: [(Int, String)] = []
        for (number, line) in prose(text) {
            let plain = Array(withoutCode(line))
            var index = 0
            while index + 1 < plain.count {
                if plain[index] == "]" && plain[index + 1] == "(" {
                    var end = index + 2
                    while end < plain.count && plain[end] != ")" && plain[end] != " " { end += 1 }
                    if end < plain.count && plain[end] == ")" {
                        result.append((number, String(plain[(index + 2)..<end])))
                    }
                    index = end
                } else {
                    index += 1
                }
            }
        }
        return result
    }

    /// The anchors GitHub gives the headings of `text`: lowercased, punctuation other than `-` and `_`
    /// dropped, spaces as hyphens, and `-1`, `-2` ... after repeats.
    static func anchors(in text: String) -> [String] {
        var seen: [String: Int] = [:]
        var result: [String] = []
        for (_, line) in prose(text) where line.hasPrefix("#") {
            let title = line.drop(while: { $0 == "#" })
            guard title.first == " " else { continue }
            var slug = ""
            for character in title.trimmingCharacters(in: .whitespaces).lowercased() {
                if character.isLetter || character.isNumber || character == "-" || character == "_" {
                    slug.append(character)
                } else if character == " " {
                    slug.append("-")
                }
            }
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            result.append(count == 0 ? slug : "\(slug)-\(count)")
        }
        return result
    }
}
