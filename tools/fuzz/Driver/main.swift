import Foundation
import KakapoFuzz

// libFuzzer's entry point. The target is named by KAKAPO_FUZZ_TARGET (tools/fuzz/run sets it): one
// instrumented binary serves every entry point, so a fuzzing run builds and links once, not seven times.
// libFuzzer provides `main`, so this file declares and runs nothing at the top level.

enum Chosen {
    static let target: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["KAKAPO_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            FileHandle.standardError.write(Data("KAKAPO_FUZZ_TARGET must be one of: \(names)\n".utf8))
            exit(2)
        }
        return target
    }()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    Chosen.target.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}
