// Measures swift-http-types' HTTPFields against Kakapo's HTTP.Headers: fidelity of every cassette header
// field and of hand-made tricky ones through a round trip, then the cost per request head.
//   http-types-check [REPO_ROOT] [--iterations N]
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
var benchmark = CostBenchmark()
if let flag = arguments.firstIndex(of: "--iterations"), flag + 1 < arguments.count, let count = Int(arguments[flag + 1]) {
    benchmark.iterations = count
    arguments.removeSubrange(flag...flag + 1)
}
// The repository root: given, or four folders above this file (tools/http-types-check/Sources/http-types-check).
let root =
    arguments.first
    ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

func column(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

func report(_ title: String, _ lists: [FieldList]) {
    print("\n## \(title)\n")
    let losses = FidelityTally.Loss.allCases
    print("| representation | fields | intact | " + losses.map(\.rawValue).joined(separator: " | ") + " |")
    print("|---|--:|--:|" + losses.map { _ in "--:|" }.joined())
    var examples: [(String, FidelityTally)] = []
    for representation in Representation.all {
        var tally = FidelityTally()
        for list in lists { tally.add(list, representation.roundTrip(list)) }
        let counts = losses.map { String(tally.counts[$0] ?? 0) }
        print("| \(representation.name) | \(tally.fields) | \(tally.intact) | " + counts.joined(separator: " | ") + " |")
        examples.append((representation.name, tally))
    }
    for (name, tally) in examples where !tally.examples.isEmpty {
        print("\n\(name):")
        for loss in losses {
            guard let examples = tally.examples[loss] else { continue }
            print("  - \(loss.rawValue) (\(tally.counts[loss]!)):")
            for example in examples { print("    - \(example)") }
        }
    }
}

let corpus = FieldCorpus.cassetteLists(root: root)
print("# swift-http-types 1.8.0 vs Kakapo's HTTP types")
print(
    "\nCassettes read: \(corpus.cassettes) (\(corpus.lists.count) heads) under \(FieldCorpus.folders.joined(separator: ", "));"
        + " JSON files that are not loadable cassettes, skipped: \(corpus.skipped.count)")
report("Fidelity: every cassette header field, round trip", corpus.lists)
report("Fidelity: tricky real-world fields, round trip", FieldCorpus.trickyLists)

print("\n## Cost per 8-field request head (best of \(benchmark.runs) runs of \(benchmark.iterations))\n")
print("| conversion | ns |")
print("|---|--:|")
for (name, body) in benchmark.cases() {
    print("| \(name) | \(String(format: "%.0f", benchmark.measure(body))) |")
}
