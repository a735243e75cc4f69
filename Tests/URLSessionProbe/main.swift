// A URLSession client for the forward-proxy tests, run as its own process so its proxy settings reach
// no other test: `kakapo-urlsession-probe PROXY-PORT URL` prints the status, the X-Kakapo-Source header
// and the body. On Apple platforms the proxy goes in `connectionProxyDictionary`; URLSession on Linux
// ignores that dictionary and follows libcurl's `http_proxy` variable, which the test sets.
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[1]), let url = URL(string: arguments[2]) else {
    FileHandle.standardError.write(Data("usage: kakapo-urlsession-probe PROXY-PORT URL\n".utf8))
    exit(2)
}
let configuration = URLSessionConfiguration.ephemeral
configuration.connectionProxyDictionary = [
    "HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": port,
    "HTTPSEnable": 1, "HTTPSProxy": "127.0.0.1", "HTTPSPort": port,
]
let session = URLSession(configuration: configuration)
do {
    let (data, response) = try await session.data(from: url)
    guard let http = response as? HTTPURLResponse else { exit(1) }
    print(
        http.statusCode, http.value(forHTTPHeaderField: "X-Kakapo-Source") ?? "-", String(decoding: data, as: UTF8.self)
    )
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
