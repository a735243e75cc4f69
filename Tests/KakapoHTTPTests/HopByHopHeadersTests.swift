import KakapoHTTP
import Testing

@Suite("Hop-by-hop headers")
struct HopByHopHeadersTests {
    @Test("the fixed names in any case and the fields Connection lists are dropped; the rest keep their order")
    func removal() {
        let headers = HTTP.Headers([
            ("Content-Type", "application/json"), ("CONNECTION", "keep-alive, X-Private ,x-other"),
            ("Keep-Alive", "timeout=5"), ("x-private", "1"), ("TE", "trailers"), ("Transfer-Encoding", "chunked"),
            ("X-Other", "2"), ("Trailer", "X"), ("Upgrade", "h2c"), ("Proxy-Connection", "keep-alive"),
            ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("Tee", "kept"),
        ])
        let kept = HopByHopHeaders.removing(from: headers)
        #expect(kept.fields.map(\.name) == ["Content-Type", "Set-Cookie", "Set-Cookie", "Tee"])
        #expect(kept.values(for: "Set-Cookie") == ["a=1", "b=2"])
    }

    @Test("headers without any hop-by-hop field come back as they are")
    func nothingToDrop() {
        let headers = HTTP.Headers([("Content-Type", "text/plain"), ("Content-Length", "3"), ("X-Connection", "no")])
        #expect(HopByHopHeaders.removing(from: headers) == headers)
    }
}
