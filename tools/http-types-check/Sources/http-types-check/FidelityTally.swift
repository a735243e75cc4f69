/// What a representation did to the fields of many round trips: how many fields came back intact, how
/// many suffered each kind of loss, and the first example of each.
struct FidelityTally {
    /// The kinds of damage, in the order the report lists them.
    enum Loss: String, CaseIterable {
        case refused = "refused"
        case dropped = "dropped"
        case renamed = "name spelling"
        case rewritten = "value bytes"
        case moved = "order"
        case added = "added"
    }

    var fields = 0
    var intact = 0
    var counts: [Loss: Int] = [:]
    /// Up to `exampleLimit` examples of each loss, in the order met.
    var examples: [Loss: [String]] = [:]
    static let exampleLimit = 8

    /// Compares one list with what came back. Each input field is paired with the next unused output
    /// field of the same name (ignoring case); a field can suffer several losses but counts once as not intact.
    mutating func add(_ list: FieldList, _ trip: RoundTrip) {
        let input = list.fields
        let output = trip.fields
        var used = [Bool](repeating: false, count: output.count)
        var pairs: [(input: Int, output: Int)] = []
        var damaged = Set<Int>()
        func note(_ loss: Loss, _ index: Int, _ example: String) {
            counts[loss, default: 0] += 1
            keep(loss, "\(list.source): \(example)")
            damaged.insert(index)
        }
        for (index, field) in input.enumerated() {
            if trip.refused.contains(index) {
                note(.refused, index, field.shown)
                continue
            }
            guard
                let match = output.indices.first(where: { !used[$0] && output[$0].canonicalName == field.canonicalName })
            else {
                note(.dropped, index, field.shown)
                continue
            }
            used[match] = true
            pairs.append((index, match))
            let back = output[match]
            if back.name != field.name { note(.renamed, index, "\(field.shown) -> \(back.shown)") }
            if back.value != field.value { note(.rewritten, index, "\(field.shown) -> \(back.shown)") }
        }
        // A field is out of order when, among the fields that came back, its rank differs from the input's.
        let outputOrder = pairs.sorted { $0.output < $1.output }
        for (rank, pair) in pairs.enumerated() where outputOrder[rank].input != pair.input {
            note(.moved, pair.input, "\(input[pair.input].shown) is field \(rank + 1) going in, not coming out")
        }
        for (index, field) in output.enumerated() where !used[index] {
            counts[.added, default: 0] += 1
            keep(.added, "\(list.source): \(field.shown)")
        }
        fields += input.count
        intact += input.count - damaged.count
    }

    private mutating func keep(_ loss: Loss, _ example: String) {
        if examples[loss, default: []].count < Self.exampleLimit { examples[loss, default: []].append(example) }
    }
}
