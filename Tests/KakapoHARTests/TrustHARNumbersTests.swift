import Foundation
import Kakapo
import Testing

/// Numbers in a HAR file are range-checked where they are read, as a cassette's are.
@Suite("Trust: numbers in HAR files")
struct TrustHARNumbersTests {
    @Test("an entry time too large to write back is refused naming the entry; an ordinary one imports")
    func hugeTime() throws {
        func har(time: String) -> [UInt8] {
            Array(
                """
                {"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [
                  {"startedDateTime": "2026-01-01T00:00:00Z", "time": \(time),
                   "request": {"method": "GET", "url": "http://a.test/x", "httpVersion": "HTTP/1.1", "headers": [],
                               "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
                   "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [],
                                "cookies": [], "content": {"size": 0, "mimeType": "text/plain", "text": ""},
                                "redirectURL": "", "headersSize": -1, "bodySize": 0},
                   "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}]}}
                """.utf8)
        }
        for time in ["1e300", "1e400", "604800001"] {
            #expect(throws: HARError.self, "time \(time)") {
                try HARImport.cassette(from: har(time: time), file: "t.har")
            }
            do {
                _ = try HARImport.cassette(from: har(time: time), file: "t.har")
            } catch {
                #expect("\(error)".contains("t.har") && "\(error)".contains("time"), "\(error)")
            }
        }
        let cassette = try HARImport.cassette(from: har(time: "12.5"), file: "t.har")
        #expect(cassette.interactions.first?.durationMilliseconds == 12.5)
        // Written and read back, the duration survives.
        let again = try CassetteFile.decode(CassetteCodec.encodeFile(cassette), file: "again.json")
        #expect(again.interactions.first?.durationMilliseconds == 12.5)
    }
}
