/// A regular expression that matches in time linear in the length of the text, for patterns that come
/// from outside: a client's `field_like` query and a routes file's `when.matches`, both matched against
/// request data on the event loop.
///
/// `NSRegularExpression` backtracks, so a pattern such as `((a*)*)*b` takes seconds (or years) on a short
/// text, and one request could stall every other on its event loop. This engine compiles the pattern to
/// a small program and runs it as a Pike VM (Thompson's NFA simulation): every step advances all the
/// live states by one character, a state is never visited twice for one position, so matching costs at
/// most `text length × program size` steps, whatever the pattern. Both are bounded: a pattern has at most
/// `maximumPatternLength` characters and compiles to at most `maximumProgramSize` instructions.
///
/// What it reads: literals, `.`, classes (`[a-z]`, `[^0-9_]`, `\d \w \s` and their negations), anchors
/// (`^ $ \A \z \b \B`), groups (`(...)`, `(?:...)`, `(?<name>...)`), alternation, `* + ?` and `{m}`,
/// `{m,}`, `{m,n}` (lazy forms too: only whether it matches counts), escapes (`\t \n \r \xHH \u{...}`), and
/// a leading `(?i)` for any case. What needs backtracking is refused with a message rather than run:
/// backreferences, lookahead and lookbehind, possessive quantifiers.
public struct LinearRegex: Sendable {
    /// Why a pattern cannot be used.
    public struct SyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// The longest pattern accepted, in characters.
    public static let maximumPatternLength = 1_000
    /// The most instructions a pattern may compile to (`{m,n}` copies its operand).
    public static let maximumProgramSize = 2_000
    /// The largest count in `{m,n}`.
    public static let maximumRepetition = 1_000

    private let program: [Instruction]
    private let classes: [ScalarClass]
    private let caseInsensitive: Bool
    private let anchoredAtStart: Bool

    /// Compiles `pattern`. With `wholeValue`, the pattern must match the whole text (as `^(?:pattern)\z`);
    /// otherwise it may match anywhere in it.
    public init(_ pattern: String, caseInsensitive: Bool = false, wholeValue: Bool = false) throws(SyntaxError) {
        guard pattern.count <= LinearRegex.maximumPatternLength else {
            throw SyntaxError(message: "a pattern is at most \(LinearRegex.maximumPatternLength) characters long")
        }
        var scalars = Array(pattern.unicodeScalars)
        var insensitive = caseInsensitive
        if scalars.starts(with: Array("(?i)".unicodeScalars)) {
            insensitive = true
            scalars.removeFirst(4)
        }
        var parser = Parser(scalars: scalars)
        let tree = try parser.parse()
        var compiler = Compiler(caseInsensitive: insensitive)
        let whole: Node = wholeValue ? .concat([.assertion(.textStart), tree, .assertion(.textEnd)]) : tree
        try compiler.emit(whole)
        compiler.program.append(.match)
        program = compiler.program
        classes = compiler.classes
        self.caseInsensitive = insensitive
        anchoredAtStart = wholeValue || LinearRegex.startsAnchored(tree)
    }

    /// Whether the pattern matches `text` (anywhere in it, or all of it for a whole-value pattern).
    public func matches(_ text: String) -> Bool {
        var unlimited = Int.max
        return matches(text, budget: &unlimited) ?? false
    }

    /// Whether the pattern matches `text`, spending at most `budget` steps (one per live state per
    /// character, what the linear bound counts); nil when the budget runs out first. A caller matching many
    /// values for one request (a `_like` over a whole collection) shares one budget among them, so the
    /// request's total work is bounded, not only each value's.
    public func matches(_ text: String, budget: inout Int) -> Bool? {
        let input = Array(text.unicodeScalars)
        var marks = [Int](repeating: -1, count: program.count)
        var current: [Int] = []
        var next: [Int] = []
        var stack: [Int] = []
        current.reserveCapacity(program.count)
        next.reserveCapacity(program.count)
        for position in 0...input.count {
            if position == 0 || !anchoredAtStart {
                if addThread(0, at: position, input: input, to: &current, marks: &marks, stack: &stack) { return true }
            }
            if current.isEmpty {
                if anchoredAtStart { return false }
                continue
            }
            guard position < input.count else { break }
            budget -= current.count + 1
            if budget < 0 { return nil }
            let scalar = input[position]
            let folded = caseInsensitive ? LinearRegex.fold(scalar) : scalar
            for pc in current {
                let advances: Bool
                switch program[pc] {
                case .scalar(let expected): advances = folded == expected
                case .any: advances = scalar != "\n" && scalar != "\r"
                case .set(let index): advances = classes[index].contains(scalar, caseInsensitive: caseInsensitive)
                default: advances = false
                }
                if advances,
                    addThread(pc + 1, at: position + 1, input: input, to: &next, marks: &marks, stack: &stack)
                {
                    return true
                }
            }
            swap(&current, &next)
            next.removeAll(keepingCapacity: true)
        }
        return false
    }

    /// Adds the state `pc` and every state reachable from it without reading a character; true when one of
    /// them is the match.
    private func addThread(
        _ start: Int, at position: Int, input: [Unicode.Scalar], to list: inout [Int], marks: inout [Int],
        stack: inout [Int]
    ) -> Bool {
        stack.append(start)
        while let pc = stack.popLast() {
            guard marks[pc] != position else { continue }
            marks[pc] = position
            switch program[pc] {
            case .match:
                stack.removeAll(keepingCapacity: true)
                return true
            case .jump(let target): stack.append(target)
            case .split(let first, let second):
                stack.append(second)
                stack.append(first)
            case .assertion(let assertion):
                if assertion.holds(at: position, in: input) { stack.append(pc + 1) }
            case .scalar, .any, .set: list.append(pc)
            }
        }
        return false
    }

    private static func startsAnchored(_ node: Node) -> Bool {
        switch node {
        case .assertion(let assertion): return assertion == .textStart
        case .concat(let nodes): return nodes.first.map(startsAnchored) ?? false
        case .group(let inner): return startsAnchored(inner)
        default: return false
        }
    }

    /// The simple lowercase form of a scalar, for matching in any case.
    static func fold(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        if scalar.isASCII {
            return scalar.value >= 0x41 && scalar.value <= 0x5A ? Unicode.Scalar(scalar.value + 0x20)! : scalar
        }
        let lower = scalar.properties.lowercaseMapping.unicodeScalars
        return lower.count == 1 ? lower.first! : scalar
    }

    /// The simple uppercase form of a scalar.
    static func upper(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        if scalar.isASCII {
            return scalar.value >= 0x61 && scalar.value <= 0x7A ? Unicode.Scalar(scalar.value - 0x20)! : scalar
        }
        let upper = scalar.properties.uppercaseMapping.unicodeScalars
        return upper.count == 1 ? upper.first! : scalar
    }
}

// MARK: - Program

extension LinearRegex {
    enum Instruction: Sendable {
        case scalar(Unicode.Scalar)
        case any
        case set(Int)
        case split(Int, Int)
        case jump(Int)
        case assertion(Assertion)
        case match
    }

    enum Assertion: Sendable, Equatable {
        case textStart, lineEnd, textEnd, wordBoundary, notWordBoundary

        func holds(at position: Int, in input: [Unicode.Scalar]) -> Bool {
            switch self {
            case .textStart: return position == 0
            case .textEnd: return position == input.count
            case .lineEnd:
                // `$` as ICU reads it by default: the end, or before a line break that ends the text.
                return position == input.count || (position == input.count - 1 && input[position] == "\n")
            case .wordBoundary, .notWordBoundary:
                let before = position > 0 && ScalarClass.isWord(input[position - 1])
                let after = position < input.count && ScalarClass.isWord(input[position])
                return (before != after) == (self == .wordBoundary)
            }
        }
    }

    /// A bracket class or one of `\d \w \s` (and their negations).
    struct ScalarClass: Sendable {
        enum Item: Sendable {
            case range(ClosedRange<UInt32>)
            case digit(Bool)
            case word(Bool)
            case space(Bool)
        }
        var items: [Item] = []
        var negated = false

        func contains(_ scalar: Unicode.Scalar, caseInsensitive: Bool) -> Bool {
            var found = containsExactly(scalar)
            if !found, caseInsensitive {
                found = containsExactly(LinearRegex.fold(scalar)) || containsExactly(LinearRegex.upper(scalar))
            }
            return found != negated
        }

        private func containsExactly(_ scalar: Unicode.Scalar) -> Bool {
            items.contains { item in
                switch item {
                case .range(let range): return range.contains(scalar.value)
                case .digit(let wanted): return ScalarClass.isDigit(scalar) == wanted
                case .word(let wanted): return ScalarClass.isWord(scalar) == wanted
                case .space(let wanted): return ScalarClass.isSpace(scalar) == wanted
                }
            }
        }

        static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
            if scalar.isASCII { return scalar.value >= 0x30 && scalar.value <= 0x39 }
            return scalar.properties.numericType == .decimal
        }

        static func isWord(_ scalar: Unicode.Scalar) -> Bool {
            if scalar.isASCII {
                let value = scalar.value
                return (value >= 0x30 && value <= 0x39) || (value | 0x20 >= 0x61 && value | 0x20 <= 0x7A)
                    || value == 0x5F
            }
            let properties = scalar.properties
            switch properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark, .connectorPunctuation, .decimalNumber: return true
            default: return properties.isAlphabetic
            }
        }

        static func isSpace(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.isWhitespace }
    }

    /// The parsed pattern.
    indirect enum Node: Sendable {
        case empty
        case scalar(Unicode.Scalar)
        case any
        case set(ScalarClass)
        case assertion(Assertion)
        case concat([Node])
        case alternation([Node])
        case group(Node)
        case repetition(Node, minimum: Int, maximum: Int?)
    }
}
