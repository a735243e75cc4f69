#if canImport(NIOHTTP2)
    import NIOHTTP2
#endif

/// HTTP/2 for Kakapo's listener and decrypted tunnels (h2c with prior knowledge, h2 by ALPN): each
/// stream is served by KakapoProxy's HTTP handlers. (Being built: issue 33.)
public enum HTTP2Server {}
