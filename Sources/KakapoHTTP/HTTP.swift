/// The HTTP values every layer shares: `HTTP.Request`, `HTTP.Response`, `HTTP.Headers` and `HTTP.Method`.
///
/// They are Kakapo's own rather than NIO's or swift-http-types': headers keep the exact spelling, order
/// and bytes they came with (a cassette replays them byte for byte), and a request keeps its target as
/// sent. The namespace keeps them apart from `NIOHTTP1.HTTPHeaders` and `HTTPTypes.HTTPRequest` in code
/// that imports those too (docs/architecture.md, "Why Kakapo has its own HTTP types").
public enum HTTP {}
