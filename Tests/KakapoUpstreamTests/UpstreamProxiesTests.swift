import KakapoUpstream
import Testing

@Suite("Upstream proxies: URLs, --no-proxy lists, the environment")
struct UpstreamProxiesTests {
    @Test("a proxy URL keeps its credentials, percent-decoded, apart from the URL every message shows")
    func parsesCredentials() throws {
        let proxy = try UpstreamProxy(parsing: "http://alice:p%40ss%3Aword@Proxy.Corp:3128/")
        #expect(proxy.username == "alice")
        #expect(proxy.password == "p@ss:word")
        #expect(proxy.url == "http://proxy.corp:3128")
        #expect(proxy.description == "http://***@proxy.corp:3128")
        #expect(!"\(proxy)".contains("p@ss") && !"\(proxy)".contains("alice"))
        #expect(try UpstreamProxy(parsing: "proxy.corp:8080").url == "http://proxy.corp:8080")
        #expect(try UpstreamProxy(parsing: "https://[::1]").url == "https://[::1]:443")
    }

    @Test("a proxy URL that cannot be used is refused with its credentials hidden")
    func refusesBadURLs() {
        for text in [
            "socks5://user:hunter2@h:1080", "http://user:hunter2@", "http://user:hunter2@h:99999", "http://h:1/x",
        ] {
            #expect {
                try UpstreamProxy(parsing: text)
            } throws: { error in
                let message = (error as? UpstreamError)?.message ?? ""
                return (error as? UpstreamError)?.code == .invalidURL && !message.contains("hunter2")
            }
        }
        #expect(throws: UpstreamError.self) {
            try UpstreamProxy(parsing: "http://" + String(repeating: "a", count: 5000))
        }
    }

    @Test("a password with a raw /, ?, #, @ or : is the credentials' up to the last @, and no message shows it")
    func readsRawPasswords() throws {
        for (text, password) in [
            ("http://bob:se/cret@proxy:3128", "se/cret"), ("http://bob:se/cr?e#t@x@proxy:3128/", "se/cr?e#t@x"),
            ("bob:a://b/@proxy:3128", "a://b/"), ("HTTPS://bob:%2F%3F:#?@Proxy:3128", "/?:#?"),
        ] {
            let proxy = try UpstreamProxy(parsing: text)
            #expect(proxy.username == "bob" && proxy.password == password, "\(text)")
            #expect(proxy.url == (text.hasPrefix("HTTPS") ? "https" : "http") + "://proxy:3128", "\(text)")
            #expect(proxy.description.hasSuffix("://***@proxy:3128"))
        }
        for (text, shown) in [
            ("http://bob:se/cret@proxy:3128/path", "\"http://***@proxy:3128/path\""),
            ("http://bob:se/cr?e#t@x@proxy:3128?q", "\"http://***@proxy:3128?q\""),
            ("socks5://bob:se/cret@proxy:1080", "\"socks5://***@proxy:1080\""),
            ("bob:se/cret://x@", "\"***@\""), ("http://bob:se/cret%zz@proxy:3128", "\"http://***@proxy:3128\""),
            ("http://bob:se/cret@proxy:99999", "\"http://***@proxy:99999\""),
        ] {
            #expect {
                try UpstreamProxy(parsing: text)
            } throws: { error in
                let message = (error as? UpstreamError)?.message ?? ""
                return message.contains(shown) && !message.contains("cret") && !message.contains("bob")
            }
        }
    }

    @Test("--no-proxy matches names with their subdomains, leading-dot domains, addresses, CIDR ranges and *")
    func matchesNoProxyEntries() throws {
        let list = try NoProxyList(
            parsing: "localhost, .corp.example, api.example.com:8443,10.0.0.0/8,fd00::/8,[::1],192.168.1.7")
        #expect(list.bypasses("localhost"))
        #expect(
            list.bypasses("corp.example") && list.bypasses("git.corp.example") && list.bypasses("GIT.CORP.EXAMPLE."))
        #expect(!list.bypasses("notcorp.example"))
        #expect(list.bypasses("api.example.com") && list.bypasses("v2.api.example.com"))
        #expect(!list.bypasses("example.com") && !list.bypasses("xapi.example.com"))
        #expect(list.bypasses("10.1.2.3") && !list.bypasses("11.0.0.1"))
        #expect(list.bypasses("[fd12::1]") && list.bypasses("fd12::1") && !list.bypasses("fe80::1"))
        #expect(list.bypasses("::1") && list.bypasses("192.168.1.7") && !list.bypasses("192.168.1.8"))
        #expect(try NoProxyList(parsing: "*").bypasses("anything.example"))
        #expect(try NoProxyList(parsing: "10.0.0.0/0").bypasses("203.0.113.9"))
        #expect(!NoProxyList().bypasses("localhost"))
    }

    @Test("a --no-proxy list that cannot be read is refused, and its size is bounded")
    func refusesBadLists() {
        for text in ["10.0.0.0/33", "fd00::/129", "10.0.0.0/x", "host/8", ".", "a,,.:1"] {
            #expect(throws: UpstreamError.self, "\(text)") { try NoProxyList(parsing: text) }
        }
        let many = (0..<1_100).map { "h\($0)" }.joined(separator: ",")
        #expect(throws: UpstreamError.self) { try NoProxyList(parsing: many) }
    }

    @Test("the environment gives a proxy per upstream scheme, lower case first, and NO_PROXY")
    func readsEnvironment() throws {
        let proxies = try UpstreamProxies.fromEnvironment([
            "HTTPS_PROXY": "http://bob:pw@secure.corp:3128", "https_proxy": "", "http_proxy": "plain.corp:8080",
            "HTTP_PROXY": "http://ignored:1", "NO_PROXY": ".internal,10.0.0.0/8",
        ])
        #expect(proxies.https?.url == "http://secure.corp:3128")
        #expect(proxies.http?.url == "http://plain.corp:8080")
        #expect(proxies.proxy(for: "https://api.example.com")?.host == "secure.corp")
        #expect(proxies.proxy(for: "http://api.example.com/x")?.host == "plain.corp")
        #expect(proxies.proxy(for: "https://db.internal") == nil)
        #expect(proxies.proxy(for: "http://10.9.9.9:8080") == nil)
        #expect(
            proxies.summary == [
                "using the upstream proxy http://plain.corp:8080 from http_proxy for http upstreams; NO_PROXY: .internal,10.0.0.0/8",
                "using the upstream proxy http://***@secure.corp:3128 from HTTPS_PROXY for https upstreams; NO_PROXY: .internal,10.0.0.0/8",
            ])
        #expect(try UpstreamProxies.fromEnvironment([:]).isDirect)
        #expect {
            try UpstreamProxies.fromEnvironment(["HTTPS_PROXY": "ftp://carol:secret@h:21"])
        } throws: { error in
            let message = (error as? UpstreamError)?.message ?? ""
            return message.hasPrefix("HTTPS_PROXY:") && !message.contains("secret")
        }
    }

    @Test("a proxy at Kakapo's own address is dropped with a warning")
    func dropsSelf() throws {
        let proxies = UpstreamProxies(proxy: try UpstreamProxy(parsing: "http://127.0.0.1:8080"), source: "HTTPS_PROXY")
        let (kept, warnings) = proxies.droppingSelf { host, port in host == "127.0.0.1" && port == 8080 }
        #expect(kept.isDirect)
        #expect(warnings.count == 2 && warnings[0].contains("Kakapo's own address"))
    }
}
