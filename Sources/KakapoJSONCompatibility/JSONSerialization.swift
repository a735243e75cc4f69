import KakapoJSON

/// `KakapoSerialization` under its old name. The old name clashed with Foundation's `JSONSerialization`
/// in every file that imports both, so `Kakapo` no longer exports it; code that still uses it imports
/// this module (`import KakapoJSONCompatibility`) and gets a deprecation warning pointing at the new name.
@available(*, deprecated, renamed: "KakapoSerialization")
public typealias JSONSerialization = KakapoSerialization
