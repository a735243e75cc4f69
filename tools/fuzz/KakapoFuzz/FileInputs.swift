import Foundation
import KakapoCassette
import KakapoHAR
import KakapoRoutesFile

/// The entry points that read a file: errors are the expected answer to most inputs, and each must name
/// the file (a message without it would leave a user guessing).
enum FileInputs {
    static func cassette(_ bytes: [UInt8]) {
        do {
            let cassette = try CassetteFile.decode(bytes, file: "fuzz.json")
            // What loads must save and load again.
            _ = try CassetteFile.decode(CassetteCodec.encodeFile(cassette), file: "again.json")
        } catch {
            check(error.description.contains("fuzz.json"), "a cassette error without the file name: \(error)")
        }
    }

    static func har(_ bytes: [UInt8]) {
        do {
            _ = try HARImport.cassette(from: bytes, file: "fuzz.har")
        } catch {
            check("\(error)".contains("fuzz.har"), "a HAR error without the file name: \(error)")
        }
    }

    /// Routes files are read from disk only, so the input goes through a file of the process's own.
    static func routes(_ bytes: [UInt8], extension pathExtension: String) {
        let path = scratchFile("routes." + pathExtension)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        do {
            _ = try RoutesFile.load(path)
        } catch {
            check("\(error)".contains(path), "a routes error without the file name: \(error)")
        }
    }

    /// A file in a folder of this process's own under the temporary folder.
    static func scratchFile(_ name: String) -> String {
        let folder = NSTemporaryDirectory() + "kakapo-fuzz-\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder + "/" + name
    }

    /// A broken promise of the code under test: stops the run so the fuzzer keeps the input.
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError(message()) }
    }
}
