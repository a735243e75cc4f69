extension LinearRegex {
    /// Turns the parsed tree into the program the matcher runs, within `maximumProgramSize` instructions.
    struct Compiler {
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
