/// How a recorded stream is replayed (`--stream-timing`): at the pace it was recorded, at a multiple of it
/// (`4x` four times as fast, `0.5x` at half speed), or every chunk back to back.
public struct StreamTiming: Sendable, Hashable, CustomStringConvertible {
    /// How many times as fast as recorded; nil: back to back.
    public let speed: Double?

    /// Each chunk after the gap it came after when it was recorded (`1x`).
    public static let recorded = StreamTiming(checkedSpeed: 1)
    /// Every chunk at once, back to back.
    public static let none = StreamTiming(checkedSpeed: nil)

    /// The speeds a timing may have: from a hundredth of the recorded pace to a thousand times it.
    public static let speeds: ClosedRange<Double> = 0.01...1000

    /// `speed` times as fast as recorded (`2`: twice as fast, `0.5`: half as fast); nil when `speed` is
    /// outside `speeds` or not a number.
    public init?(speed: Double) {
        guard Self.speeds.contains(speed) else { return nil }
        self.init(checkedSpeed: speed)
    }

    private init(checkedSpeed: Double?) { speed = checkedSpeed }

    /// The timing `text` names: `recorded`, `none`, or a speed such as `4x` or `0.5x` (digits with at most
    /// one decimal point, then `x`, within `speeds`); nil for anything else.
    public init?(_ text: String) {
        switch text {
        case "recorded": self = .recorded
        case "none": self = .none
        default:
            guard let factor = Self.factor(text) else { return nil }
            self.init(speed: factor)
        }
    }

    /// The number of `Nx`, read only from plain decimals (no sign, exponent, hexadecimal, `nan` or `inf`),
    /// at most 16 characters long.
    private static func factor(_ text: String) -> Double? {
        guard text.utf8.count <= 17, text.last == "x" || text.last == "X" else { return nil }
        let digits = text.dropLast()
        guard !digits.isEmpty, digits.first != ".", digits.last != ".",
            digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            digits.filter({ $0 == "." }).count <= 1
        else { return nil }
        return Double(digits)
    }

    /// `recorded`, `none`, or the speed as `4x`.
    public var description: String {
        switch speed {
        case nil: "none"
        case 1: "recorded"
        case let speed?:
            speed == speed.rounded() ? "\(Int(speed))x" : "\(speed)x"
        }
    }

    /// When a chunk recorded `milliseconds` after the first goes out with this timing; nil: at once,
    /// after the chunk before.
    package func playbackMilliseconds(_ milliseconds: Double) -> Double? {
        speed.map { milliseconds / $0 }
    }
}
