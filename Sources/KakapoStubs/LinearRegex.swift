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
    fileprivate enum Instruction: Sendable {
        case scalar(Unicode.Scalar)
        case any
        case set(Int)
        case split(Int, Int)
        case jump(Int)
        case assertion(Assertion)
        case match
    }

    fileprivate enum Assertion: Sendable, Equatable {
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
    fileprivate struct ScalarClass: Sendable {
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
    fileprivate indirect enum Node: Sendable {
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

// MARK: - Parser

extension LinearRegex {
    /// A recursive-descent reader of the pattern; nesting is bounded so the recursion is too.
    fileprivate struct Parser {
        let scalars: [Unicode.Scalar]
        var index = 0
        var depth = 0
        static let maximumDepth = 100

        init(scalars: [Unicode.Scalar]) { self.scalars = scalars }

        mutating func parse() throws(SyntaxError) -> Node {
            let node = try alternation()
            if index < scalars.count {
                throw SyntaxError(message: "unmatched ')' at character \(index + 1)")
            }
            return node
        }

        private var peek: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

        private mutating func alternation() throws(SyntaxError) -> Node {
            var branches = [try sequence()]
            while peek == "|" {
                index += 1
                branches.append(try sequence())
            }
            return branches.count == 1 ? branches[0] : .alternation(branches)
        }

        private mutating func sequence() throws(SyntaxError) -> Node {
            var items: [Node] = []
            while let scalar = peek, scalar != "|", scalar != ")" {
                let atom = try self.atom()
                items.append(try quantified(atom))
            }
            if items.isEmpty { return .empty }
            return items.count == 1 ? items[0] : .concat(items)
        }

        private mutating func quantified(_ atom: Node) throws(SyntaxError) -> Node {
            var node = atom
            while let scalar = peek {
                let bounds: (Int, Int?)
                switch scalar {
                case "*": bounds = (0, nil)
                case "+": bounds = (1, nil)
                case "?": bounds = (0, 1)
                case "{":
                    guard let counted = try counts() else { return node }
                    bounds = counted
                    index -= 1  // `counts` consumed the closing brace; the shared step below takes it again
                default: return node
                }
                index += 1
                if case .assertion = node { throw SyntaxError(message: "an anchor cannot be repeated") }
                if case .empty = node { throw SyntaxError(message: "nothing to repeat before '\(scalar)'") }
                if peek == "?" {
                    index += 1  // lazy: the same language, and only whether it matches counts here
                } else if peek == "+" {
                    throw SyntaxError(message: "possessive quantifiers (such as a*+) are not supported")
                }
                node = .repetition(node, minimum: bounds.0, maximum: bounds.1)
            }
            return node
        }

        /// `{m}`, `{m,}` or `{m,n}` at `index`, leaving `index` after the `}`; nil (and `index` unchanged)
        /// when the brace does not start one, so it is a literal `{`.
        private mutating func counts() throws(SyntaxError) -> (Int, Int?)? {
            var cursor = index + 1
            func number(_ cursor: inout Int) -> Int?? {
                var digits = ""
                while cursor < scalars.count, ("0"..."9").contains(scalars[cursor]) {
                    digits.unicodeScalars.append(scalars[cursor])
                    cursor += 1
                }
                if digits.isEmpty { return .some(nil) }
                // Long digit strings are over the limit anyway; keep them from overflowing.
                return digits.count > 6 ? .some(Int.max) : .some(Int(digits))
            }
            guard let minimum = number(&cursor) ?? nil else { return nil }
            var maximum: Int? = minimum
            if cursor < scalars.count, scalars[cursor] == "," {
                cursor += 1
                maximum = number(&cursor) ?? nil
            }
            guard cursor < scalars.count, scalars[cursor] == "}" else { return nil }
            guard minimum <= LinearRegex.maximumRepetition, (maximum ?? 0) <= LinearRegex.maximumRepetition else {
                throw SyntaxError(message: "a repetition count is at most \(LinearRegex.maximumRepetition)")
            }
            if let maximum, maximum < minimum {
                throw SyntaxError(message: "in {\(minimum),\(maximum)} the first count exceeds the second")
            }
            index = cursor + 1
            return (minimum, maximum)
        }

        private mutating func atom() throws(SyntaxError) -> Node {
            let scalar = scalars[index]
            index += 1
            switch scalar {
            case ".": return .any
            case "^": return .assertion(.textStart)
            case "$": return .assertion(.lineEnd)
            case "[": return .set(try bracket())
            case "(": return try group()
            case "\\": return try escape()
            case "*", "+", "?": throw SyntaxError(message: "nothing to repeat before '\(scalar)'")
            default: return .scalar(scalar)
            }
        }

        private mutating func group() throws(SyntaxError) -> Node {
            depth += 1
            defer { depth -= 1 }
            guard depth <= Parser.maximumDepth else {
                throw SyntaxError(message: "groups nest at most \(Parser.maximumDepth) deep")
            }
            if peek == "?" {
                index += 1
                let rest = scalars[index...]
                if rest.starts(with: [":"]) {
                    index += 1
                } else if rest.starts(with: ["=" as Unicode.Scalar]) || rest.starts(with: ["!"])
                    || rest.starts(with: ["<", "="]) || rest.starts(with: ["<", "!"])
                {
                    throw SyntaxError(message: "lookahead and lookbehind are not supported (they need backtracking)")
                } else if rest.starts(with: ["<"]) || rest.starts(with: ["P", "<"]) || rest.starts(with: ["'"]) {
                    // A named group: the name does not matter for whether the pattern matches.
                    let close: Unicode.Scalar = rest.first == "'" ? "'" : ">"
                    guard let end = rest.dropFirst().firstIndex(of: close) else {
                        throw SyntaxError(message: "a group name is not closed")
                    }
                    index = end + 1
                } else {
                    throw SyntaxError(
                        message: "unsupported group \"(?\(String(String.UnicodeScalarView(rest.prefix(2)))))\"; "
                            + "use (...) or (?:...), and (?i) only at the start")
                }
            }
            let inner = try alternation()
            guard peek == ")" else { throw SyntaxError(message: "missing ')'") }
            index += 1
            return .group(inner)
        }

        private mutating func escape() throws(SyntaxError) -> Node {
            guard let scalar = peek else { throw SyntaxError(message: "the pattern ends with a lone backslash") }
            switch scalar {
            case "A":
                index += 1
                return .assertion(.textStart)
            case "z", "Z":
                index += 1
                return .assertion(scalar == "z" ? .textEnd : .lineEnd)
            case "b", "B":
                index += 1
                return .assertion(scalar == "b" ? .wordBoundary : .notWordBoundary)
            default:
                if let item = try classEscape() {
                    var set = ScalarClass()
                    set.items = [item]
                    return .set(set)
                }
                return .scalar(try literalEscape())
            }
        }

        /// `\d \D \w \W \s \S` at `index` (after the backslash), or nil for another escape.
        private mutating func classEscape() throws(SyntaxError) -> ScalarClass.Item? {
            guard let scalar = peek else { return nil }
            let item: ScalarClass.Item
            switch scalar {
            case "d": item = .digit(true)
            case "D": item = .digit(false)
            case "w": item = .word(true)
            case "W": item = .word(false)
            case "s": item = .space(true)
            case "S": item = .space(false)
            default: return nil
            }
            index += 1
            return item
        }

        /// The character an escape at `index` (after the backslash) stands for.
        private mutating func literalEscape() throws(SyntaxError) -> Unicode.Scalar {
            guard let scalar = peek else { throw SyntaxError(message: "the pattern ends with a lone backslash") }
            index += 1
            switch scalar {
            case "t": return "\t"
            case "n": return "\n"
            case "r": return "\r"
            case "f": return "\u{0C}"
            case "v": return "\u{0B}"
            case "e": return "\u{1B}"
            case "0": return "\0"
            case "x", "u":
                var digits = ""
                if peek == "{" {
                    index += 1
                    while let next = peek, next != "}" {
                        digits.unicodeScalars.append(next)
                        index += 1
                    }
                    guard peek == "}" else { throw SyntaxError(message: "missing '}' in \\\(scalar){...}") }
                    index += 1
                } else {
                    let count = scalar == "x" ? 2 : 4
                    guard index + count <= scalars.count else {
                        throw SyntaxError(message: "\\\(scalar) needs \(count) hexadecimal digits")
                    }
                    digits = String(String.UnicodeScalarView(scalars[index..<(index + count)]))
                    index += count
                }
                guard digits.count <= 8, let value = UInt32(digits, radix: 16), let result = Unicode.Scalar(value)
                else {
                    throw SyntaxError(message: "\\\(scalar)\(digits) is not a valid character")
                }
                return result
            case "1"..."9", "k":
                throw SyntaxError(message: "backreferences are not supported (they need backtracking)")
            default:
                if scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                    throw SyntaxError(message: "unsupported escape \\\(scalar)")
                }
                return scalar
            }
        }

        /// A bracket class, `index` just after the `[`.
        private mutating func bracket() throws(SyntaxError) -> ScalarClass {
            var set = ScalarClass()
            if peek == "^" {
                set.negated = true
                index += 1
            }
            var first = true
            while true {
                guard let scalar = peek else { throw SyntaxError(message: "missing ']'") }
                if scalar == "]" && !first {
                    index += 1
                    return set
                }
                first = false
                if scalar == "[" {
                    throw SyntaxError(message: "nested classes and set operations in [...] are not supported")
                }
                let low: Unicode.Scalar
                index += 1
                if scalar == "\\" {
                    if let item = try classEscape() {
                        set.items.append(item)
                        continue
                    }
                    low = try literalEscape()
                } else {
                    low = scalar
                }
                if peek == "-", index + 1 < scalars.count, scalars[index + 1] != "]" {
                    index += 1
                    var high = scalars[index]
                    index += 1
                    if high == "\\" { high = try literalEscape() }
                    guard low.value <= high.value else {
                        throw SyntaxError(message: "the range \(low)-\(high) is backwards")
                    }
                    set.items.append(.range(low.value...high.value))
                } else {
                    set.items.append(.range(low.value...low.value))
                }
            }
        }
    }
}

// MARK: - Compiler

extension LinearRegex {
    fileprivate struct Compiler {
        let caseInsensitive: Bool
        var program: [Instruction] = []
        var classes: [ScalarClass] = []

        mutating func emit(_ node: Node) throws(SyntaxError) {
            guard program.count < LinearRegex.maximumProgramSize else {
                throw SyntaxError(
                    message: "the pattern is too large (more than \(LinearRegex.maximumProgramSize) steps once "
                        + "repetitions are counted)")
            }
            switch node {
            case .empty: break
            case .scalar(let scalar): program.append(.scalar(caseInsensitive ? LinearRegex.fold(scalar) : scalar))
            case .any: program.append(.any)
            case .set(let set):
                classes.append(set)
                program.append(.set(classes.count - 1))
            case .assertion(let assertion): program.append(.assertion(assertion))
            case .group(let inner): try emit(inner)
            case .concat(let nodes):
                for node in nodes { try emit(node) }
            case .alternation(let branches):
                // split L1, next; L1: branch; jump end; next: split ...
                var jumps: [Int] = []
                for (offset, branch) in branches.enumerated() {
                    if offset < branches.count - 1 {
                        let split = program.count
                        program.append(.split(split + 1, 0))
                        try emit(branch)
                        jumps.append(program.count)
                        program.append(.jump(0))
                        program[split] = .split(split + 1, program.count)
                    } else {
                        try emit(branch)
                    }
                }
                for jump in jumps { program[jump] = .jump(program.count) }
            case .repetition(let inner, let minimum, let maximum):
                for _ in 0..<minimum { try emit(inner) }
                if let maximum {
                    // Each optional copy: split body, end; the ends are patched once known.
                    var splits: [Int] = []
                    for _ in minimum..<maximum {
                        splits.append(program.count)
                        program.append(.split(program.count + 1, 0))
                        try emit(inner)
                    }
                    for split in splits { program[split] = .split(split + 1, program.count) }
                } else {
                    // loop: split body, end; body; jump loop
                    let loop = program.count
                    program.append(.split(loop + 1, 0))
                    try emit(inner)
                    program.append(.jump(loop))
                    program[loop] = .split(loop + 1, program.count)
                }
            }
            guard program.count <= LinearRegex.maximumProgramSize else {
                throw SyntaxError(
                    message: "the pattern is too large (more than \(LinearRegex.maximumProgramSize) steps once "
                        + "repetitions are counted)")
            }
        }
    }
}
