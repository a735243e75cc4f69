/// Kakapo's version, set here and nowhere else: `kakapo --version`, `"version"` in
/// `GET /__kakapo/health` and the release archive's name (`tools/release.sh` reads this line) all use it.
public enum KakapoVersion {
    /// The semantic version of this build, such as `0.9.0`.
    public static let current = "0.9.0"
}
