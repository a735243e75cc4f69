import CCurl
import KakapoHTTP

extension CurlHandle {
    /// Sends the transfer through `proxy`, or direct when nil. libcurl never reads `http_proxy` or
    /// `no_proxy` itself (Kakapo decided already, see `UpstreamProxies`): the proxy is always set, empty
    /// for none, and its bypass list always empty. The credentials go in their own options, never in the
    /// URL libcurl could print. TLS to an `https://` proxy trusts what the upstream's does (`caBundle`,
    /// from `--upstream-ca`) and is not checked with `--insecure`.
    func setProxy(_ proxy: UpstreamProxy?, configuration: UpstreamConfiguration, caBundle: [UInt8]?) {
        _ = kakapo_curl_setopt_string(handle, CURLOPT_NOPROXY, "")
        guard let proxy else {
            _ = kakapo_curl_setopt_string(handle, CURLOPT_PROXY, "")
            return
        }
        _ = kakapo_curl_setopt_string(handle, CURLOPT_PROXY, proxy.url)
        if let username = proxy.username {
            _ = kakapo_curl_setopt_string(handle, CURLOPT_PROXYUSERNAME, username)
            _ = kakapo_curl_setopt_string(handle, CURLOPT_PROXYPASSWORD, proxy.password ?? "")
            // Basic only (libcurl's default), sent with the first request rather than after a 407.
            _ = kakapo_curl_setopt_long(handle, CURLOPT_PROXYAUTH, 1)
        }
        guard proxy.scheme == "https" else { return }
        _ = kakapo_curl_setopt_long(handle, CURLOPT_PROXY_SSL_VERIFYPEER, configuration.insecure ? 0 : 1)
        _ = kakapo_curl_setopt_long(handle, CURLOPT_PROXY_SSL_VERIFYHOST, configuration.insecure ? 0 : 2)
        if let caBundle {
            _ = caBundle.withUnsafeBytes { bytes in
                kakapo_curl_setopt_blob(
                    handle, CURLOPT_PROXY_CAINFO_BLOB, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                    bytes.count)
            }
        }
    }

    /// The failure that is the proxy's, for a transfer through `proxy` that ended with `code` and `status`:
    /// a refused `CONNECT` (an `https://` upstream), a 407 answered in the upstream's place (an `http://`
    /// one: never handed on nor recorded), a proxy that cannot be reached or whose TLS fails; nil when
    /// the proxy did its part.
    func proxyFailure(_ code: CURLcode, status: Int, proxy: UpstreamProxy, sink: ResponseSink) -> UpstreamError? {
        var connectCode = 0
        _ = kakapo_curl_getinfo_long(handle, CURLINFO_HTTP_CONNECTCODE, &connectCode)
        // A refused CONNECT may end the transfer with an error or (a 401, as tinyproxy answers wrong
        // credentials) with that answer as if it were the upstream's.
        if connectCode >= 300 {
            return UpstreamProxyFailure.refused(proxy, status: connectCode, statusLine: sink.statusLine)
        }
        if code == CURLE_OK {
            guard status == 407 else { return nil }
            return UpstreamProxyFailure.refused(proxy, status: status, statusLine: sink.statusLine)
        }
        // An https:// (or h2c://) upstream is tunnelled: a failure before the proxy answered the CONNECT is
        // the proxy's.
        let beforeTunnel = tunnelled && connectCode == 0
        let tlsCodes = [
            CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR,
        ]
        if code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_PROXY {
            return UpstreamProxyFailure.unreachable(proxy, reason: reason(for: code))
        }
        if tlsCodes.contains(code) && proxy.scheme == "https" && (beforeTunnel || !url.lowercased().hasPrefix("https:"))
        {
            return UpstreamProxyFailure.unreachable(proxy, reason: "TLS failed: " + reason(for: code))
        }
        if beforeTunnel && (code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR || code == CURLE_GOT_NOTHING) {
            return UpstreamProxyFailure.unreachable(proxy, reason: "it closed the connection: " + reason(for: code))
        }
        return nil
    }
}
