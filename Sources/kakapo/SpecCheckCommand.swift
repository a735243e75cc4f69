import ArgumentParser
import Foundation
import Kakapo
import KakapoOpenAPI

extension CassetteCommand {
    /// `kakapo cassette check FILE --openapi SPEC`
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Report every recorded request or response that an OpenAPI description does not allow.",
            discussion: """
                Checks the path and method, path/query/header parameters, request and response media types \
                and JSON bodies (by JSON pointer), and the status. OpenAPI 3.0, 3.1 and 3.2, JSON or YAML.
                Exit codes: 0 everything allowed, 1 something reported, 2 usage error, 3 unreadable cassette or spec.
                """)

        @Argument(help: "The cassette to check.")
        var file: String

        @Option(help: "The OpenAPI description (JSON, or YAML for .yaml/.yml).")
        var openapi: String

        @Option(help: "text for people, json for machines.")
        var format: Verify.OutputFormat = .text

        func run() throws {
            let cassette = try loadOrExit(file)
            let spec: OpenAPISpec
            do {
                spec = try OpenAPISpec.load(openapi)
            } catch {
                throw ExitStatus.failure(error)
            }
            let findings = CassetteSpecChecker(spec: spec).check(cassette)
            let broken = findings.filter { !$0.problems.isEmpty }
            let problems = broken.reduce(0) { $0 + $1.problems.count }
            switch format {
            case .text:
                for finding in broken { print(finding.text) }
                print(
                    "\(findings.count) interaction\(findings.count == 1 ? "" : "s") checked against \(openapi) (OpenAPI \(spec.declaredVersion)): "
                        + "\(findings.count - broken.count) allowed, \(broken.count) not allowed"
                        + (problems == 0 ? "" : " (\(problems) problem\(problems == 1 ? "" : "s"))"))
            case .json:
                let document: JSONValue = [
                    "cassette": .string(file), "openapi": .string(openapi),
                    "openapiVersion": .string(spec.declaredVersion),
                    "interactions": .array(findings.map(\.json)),
                    "allowed": .number(JSONNumber(findings.count - broken.count)),
                    "notAllowed": .number(JSONNumber(broken.count)), "problems": .number(JSONNumber(problems)),
                ]
                print(String(decoding: JSONWriter(layout: .readable).write(document), as: UTF8.self))
            }
            if !broken.isEmpty { throw ExitCode(1) }
        }
    }
}
