import Foundation

/// How long a route waits before answering: fixed, uniform between two bounds, or log-normal around a
/// median (the long tail real APIs have). Waiting never blocks a thread: the server schedules the answer.
public enum Latency: Hashable, Sendable {
    case fixed(Duration)
    case uniform(Duration, Duration)
    case lognormal(median: Duration, sigma: Double)

    /// Reads `"250ms"`, `{"uniform": ["100ms", "300ms"]}` or `{"lognormal": {"median": "100ms", "sigma": 0.4}}`.
    init(_ node: DefinitionNode) throws(RoutesError) {
        if case .object = node.value {
            let object = try node.object(allowed: ["uniform", "lognormal"])
            let (kind, value) = try object.exactlyOne(of: ["uniform", "lognormal"], what: "a latency")
            if kind == "uniform" {
                let bounds = try value.array()
                guard bounds.count == 2 else { throw value.error("expected two durations, [\"low\", \"high\"]") }
                let low = try Latency.duration(bounds[0])
                let high = try Latency.duration(bounds[1])
                guard low <= high else { throw value.error("the first duration must not exceed the second") }
                self = .uniform(low, high)
            } else {
                let parameters = try value.object(allowed: ["median", "sigma"])
                guard let median = parameters["median"], let sigma = parameters["sigma"] else {
                    throw value.error("needs \"median\" (a duration) and \"sigma\" (a number)")
                }
                let spread = try sigma.number()
                guard spread >= 0, spread <= 5 else { throw sigma.error("expected a number from 0 to 5") }
                self = .lognormal(median: try Latency.duration(median), sigma: spread)
            }
            return
        }
        self = .fixed(try Latency.duration(node))
    }

    /// One delay drawn from the distribution.
    public func sample() -> Duration {
        switch self {
        case .fixed(let duration):
            return duration
        case .uniform(let low, let high):
            let span = (high - low) / Duration.milliseconds(1)
            return low + .microseconds(Int64((Double.random(in: 0...1) * span * 1000).rounded()))
        case .lognormal(let median, let sigma):
            // Box-Muller: a standard normal draw from two uniform ones.
            let u1 = Double.random(in: Double.leastNonzeroMagnitude..<1)
            let u2 = Double.random(in: 0..<1)
            let normal = (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
            let milliseconds = median / Duration.milliseconds(1) * exp(sigma * normal)
            return .microseconds(Int64(min(milliseconds, 3_600_000) * 1000))
        }
    }

    /// The longest delay a route may ask for.
    static let longest = Duration.seconds(3_600)

    /// Reads `"250ms"`, `"1.5s"`, `"2m"`, or a number of milliseconds, from zero to one hour. The amount is
    /// range-checked before any arithmetic, so no spelling (`1e300`, `1e400`, `nan`) can overflow.
    static func duration(_ node: DefinitionNode) throws(RoutesError) -> Duration {
        let problem = "expected a duration from 0 to 1 hour, such as \"250ms\", \"1.5s\", \"2m\" or 250 (milliseconds)"
        let maximum = Double(longest / .milliseconds(1))
        func microseconds(_ amount: Double, scale: Double) throws(RoutesError) -> Duration {
            guard amount.isFinite, amount >= 0, amount <= maximum / scale else { throw node.error(problem) }
            return .microseconds(Int64((amount * scale * 1000).rounded()))
        }
        if case .number(let number) = node.value {
            guard let milliseconds = Double(number.literal) else { throw node.error(problem) }
            return try microseconds(milliseconds, scale: 1)
        }
        guard case .string(let text) = node.value else { throw node.error(problem) }
        let units: [(String, Double)] = [("ms", 1), ("s", 1000), ("m", 60_000)]
        for (unit, scale) in units where text.hasSuffix(unit) {
            guard let amount = Double(text.dropLast(unit.count).trimmingCharacters(in: .whitespaces)) else {
                throw node.error(problem)
            }
            return try microseconds(amount, scale: scale)
        }
        throw node.error(problem)
    }
}
