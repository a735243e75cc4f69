import Testing

@testable import KakapoEngine

/// The rate limit on the log's miss lines, driven by instants given (no clock, no sleep).
@Suite("Miss log limit")
struct MissLogTests {
    @Test("the first misses are logged in full, then one a second, each after the count held back")
    func bucket() {
        var bucket = MissLog.Bucket(burst: 3, interval: .seconds(1))
        let start = ContinuousClock.now
        // A burst of 3 goes through, the rest of the same instant is held back.
        let first = (0..<10).map { _ in bucket.admit(at: start) }
        #expect(first == [0, 0, 0, nil, nil, nil, nil, nil, nil, nil])
        #expect(bucket.heldBack == 7)
        // Half a second later: still nothing.
        #expect(bucket.admit(at: start + .milliseconds(500)) == nil)
        // A second later one line, after the 8 held back.
        #expect(bucket.admit(at: start + .seconds(1)) == 8)
        #expect(bucket.admit(at: start + .seconds(1)) == nil)
        // A long quiet time refills the burst, and no more than it.
        let later = start + .seconds(3600)
        let again = (0..<5).map { _ in bucket.admit(at: later) }
        #expect(again == [1, 0, 0, nil, nil])
    }

    @Test("a flood of 10,000 misses over 10 seconds makes at most the burst plus one a second")
    func flood() {
        var bucket = MissLog.Bucket(burst: MissLog.burst, interval: MissLog.interval)
        let start = ContinuousClock.now
        var logged = 0
        var held = 0
        for number in 0..<10_000 {
            if let heldBack = bucket.admit(at: start + .milliseconds(number)) {
                logged += 1
                held += heldBack
            }
        }
        #expect(logged == MissLog.burst + 9)
        #expect(logged + held + bucket.heldBack == 10_000)
    }
}
