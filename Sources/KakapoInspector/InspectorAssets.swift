/// The inspector's page as built into the binary: the files of `Web/` (SwiftPM embeds each as a byte
/// array in `PackageResources`), served under `/__kakapo/ui/` by their names.
///
///     let page = InspectorAssets.named("index.html")   // the page itself, at /__kakapo/ui
///     let script = InspectorAssets.named("app.js")     // /__kakapo/ui/app.js
public enum InspectorAssets {
    /// One file of the page.
    public struct Asset: Sendable {
        /// The file's bytes, as in the repository.
        public let bytes: [UInt8]
        /// Its `Content-Type`, with a charset for text.
        public let contentType: String
    }

    /// Every file by its name. A file added to `Web/` is served once it is listed here
    /// (`InspectorAssetTests` fails for a file that is not).
    public static let all: [String: Asset] = [
        "index.html": Asset(bytes: PackageResources.index_html, contentType: "text/html; charset=utf-8"),
        "inspector.css": Asset(bytes: PackageResources.inspector_css, contentType: "text/css; charset=utf-8"),
        "favicon.svg": Asset(bytes: PackageResources.favicon_svg, contentType: "image/svg+xml"),
        "app.js": script(PackageResources.app_js),
        "api.js": script(PackageResources.api_js),
        "events.js": script(PackageResources.events_js),
        "list.js": script(PackageResources.list_js),
        "filters.js": script(PackageResources.filters_js),
        "detail.js": script(PackageResources.detail_js),
        "json-view.js": script(PackageResources.json_view_js),
        "body-view.js": script(PackageResources.body_view_js),
        "miss-view.js": script(PackageResources.miss_view_js),
        "cassette-view.js": script(PackageResources.cassette_view_js),
        "curl.js": script(PackageResources.curl_js),
        "format.js": script(PackageResources.format_js),
    ]

    /// The file called `name` (`app.js`); nil for any other name.
    public static func named(_ name: String) -> Asset? { all[name] }

    private static func script(_ bytes: [UInt8]) -> Asset {
        Asset(bytes: bytes, contentType: "text/javascript; charset=utf-8")
    }
}
