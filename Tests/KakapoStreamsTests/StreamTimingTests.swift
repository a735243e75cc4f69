import KakapoStreams
import Testing

/// `StreamTiming`: `recorded`, `none` and speeds such as `4x`, read from text with every number checked.
@Suite("Stream timing")
struct StreamTimingTests {
    @Test("recorded, none and plain decimal speeds are read; 1x is recorded")
    func reads() {
        #expect(StreamTiming("recorded") == .recorded)
        #expect(StreamTiming("none") == StreamTiming.none)
        #expect(StreamTiming("1x") == .recorded)
        #expect(StreamTiming("4x")?.speed == 4)
        #expect(StreamTiming("0.5x")?.speed == 0.5)
        #expect(StreamTiming("0.01x")?.speed == 0.01)
        #expect(StreamTiming("1000X")?.speed == 1000)
        #expect(StreamTiming("4x")?.description == "4x")
        #expect(StreamTiming("0.5x")?.description == "0.5x")
        #expect(StreamTiming.none.description == "none")
        #expect(StreamTiming.recorded.description == "recorded")
    }

    @Test(
        "anything else is refused: out of range, not a number, signs, exponents, hexadecimal, too long",
        arguments: [
            "", "x", "4", "0x", "0.0x", "0.009x", "1000.1x", "nanx", "infx", "-1x", "+1x", "1e2x", "0x10x", ".5x",
            "5.x", "1.2.3x", "4 x", "٤x", String(repeating: "1", count: 40) + "x", "Recorded",
        ])
    func refuses(_ text: String) {
        #expect(StreamTiming(text) == nil)
    }

    @Test("a speed out of range or not a number makes no timing")
    func speeds() {
        #expect(StreamTiming(speed: .nan) == nil)
        #expect(StreamTiming(speed: .infinity) == nil)
        #expect(StreamTiming(speed: 0) == nil)
        #expect(StreamTiming(speed: 2)?.speed == 2)
    }
}
