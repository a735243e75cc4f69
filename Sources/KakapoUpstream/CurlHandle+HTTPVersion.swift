import CCurl

extension CurlHandle {
    /// Asks for HTTP/2 from the first byte with `http2PriorKnowledge` (an `h2c://` upstream), for HTTP/2
    /// when the TLS handshake offers it when `secure` (ALPN; HTTP/1.1 otherwise), else for HTTP/1.1: never an
    /// `Upgrade: h2c` of libcurl's own on a client's request.
    func setHTTPVersion(secure: Bool, http2PriorKnowledge: Bool) {
        let version =
            http2PriorKnowledge
            ? CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE : secure ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1
        _ = kakapo_curl_setopt_long(handle, CURLOPT_HTTP_VERSION, Int(version))
        guard http2PriorKnowledge else { return }
        // HTTP/2 ends a body with its stream, and trailers may follow it: libcurl 7.x ends the transfer as
        // soon as `content-length` bytes came, and the trailers are lost.
        _ = kakapo_curl_setopt_long(handle, CURLOPT_IGNORE_CONTENT_LENGTH, 1)
        if CurlHandle.reusesPriorKnowledgeConnections {
            // Known to multiplex: transfers that start together wait for the first connection and share it,
            // instead of each opening its own.
            _ = kakapo_curl_setopt_long(handle, CURLOPT_PIPEWAIT, 1)
        } else {
            _ = kakapo_curl_setopt_long(handle, CURLOPT_FRESH_CONNECT, 1)
            _ = kakapo_curl_setopt_long(handle, CURLOPT_FORBID_REUSE, 1)
        }
    }

    /// Whether libcurl can send a request on a cleartext HTTP/2 connection that carried one before: before
    /// 8.0.0 it starts HTTP/2 over again on it, and the upstream sees garbage (curl issue 10634; Debian 12
    /// has 7.88.1). There, every `h2c://` request has a connection of its own.
    static let reusesPriorKnowledgeConnections: Bool = {
        guard let info = curl_version_info(CURLVERSION_FIRST) else { return false }
        return info.pointee.version_num >= 0x08_00_00
    }()

    /// The HTTP version the finished transfer's answer came in, as a cassette writes it (`"1.1"`, `"2"`);
    /// nil when libcurl does not say.
    var answeredVersion: String? {
        var version = 0
        _ = kakapo_curl_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version)
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): return "1.0"
        case Int(CURL_HTTP_VERSION_1_1): return "1.1"
        case Int(CURL_HTTP_VERSION_2_0): return "2"
        case Int(CURL_HTTP_VERSION_3): return "3"
        default: return nil
        }
    }
}
