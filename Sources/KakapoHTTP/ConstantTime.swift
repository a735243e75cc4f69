/// Comparisons of secrets (tokens, passwords) that take the same time whatever the guess, so timing tells
/// an attacker nothing about how much of it was right.
package enum ConstantTime {
    /// Whether `given` is `expected`, in a time that depends on `expected`'s length only.
    package static func equal(_ given: some Collection<UInt8>, _ expected: [UInt8]) -> Bool {
        var difference: UInt8 = given.count == expected.count ? 0 : 1
        var index = given.startIndex
        for offset in 0..<expected.count {
            let byte: UInt8
            if index < given.endIndex {
                byte = given[index]
                index = given.index(after: index)
            } else {
                byte = 0
            }
            difference |= byte ^ expected[offset]
        }
        return difference == 0
    }

    /// Whether `headerValue` is `Bearer TOKEN` for `token`, compared in constant time; false without a value.
    package static func isBearer(_ headerValue: String?, token: String) -> Bool {
        guard let headerValue else { return false }
        return equal(headerValue.utf8, Array(("Bearer " + token).utf8))
    }
}
