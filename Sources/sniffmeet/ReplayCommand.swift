import ArgumentParser
import Domain
import EventLog
import Foundation
import Logging
import PersonalData
import Postgres
import Projections

/// `sniffmeet replay`: export the log as NDJSON (with filters), fold one stream as of a
/// position, or import an export into an empty database.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Export the log as NDJSON, fold a stream, or import an export."
    )

    @OptionGroup var database: DatabaseOptions
    @Option(help: "only this stream (repeatable)") var stream: [String] = []
    @Option(help: "only this event type (repeatable)") var type: [String] = []
    @Option(help: "from this log position, inclusive (as in Log-Position)") var from: String?
    @Option(help: "up to this log position, inclusive") var to: String?
    @Option(help: "recorded at or after this RFC 3339 UTC time") var since: String?
    @Option(help: "recorded before this RFC 3339 UTC time") var until: String?
    @Option(name: .shortAndLong, help: "write to this file instead of stdout") var output: String?
    @Option(help: "print the state of this stream instead of exporting") var fold: String?
    @Option(help: "with --fold: as of this log position") var at: String?
    @Option(name: .customLong("import"), help: "load this NDJSON export into the (empty) database") var importFile: String?

    static func position(_ text: String?, _ option: String) throws -> LogPosition? {
        guard let text else { return nil }
        guard let position = LogPosition(text) else { throw ValidationError("--\(option) must be a log position like 1234.56") }
        return position
    }

    static func time(_ text: String?, _ option: String) throws -> Date? {
        guard let text else { return nil }
        guard let date = Timestamp.date(from: text) else {
            throw ValidationError("--\(option) must be an RFC 3339 UTC time like 2026-11-23T07:00:00Z")
        }
        return date
    }

    func validate() throws {
        if importFile != nil && fold != nil { throw ValidationError("--import and --fold do not go together") }
        if at != nil && fold == nil { throw ValidationError("--at goes with --fold") }
        _ = try Self.position(from, "from")
        _ = try Self.position(to, "to")
        _ = try Self.position(at, "at")
        _ = try Self.time(since, "since")
        _ = try Self.time(until, "until")
    }

    func run() async throws {
        let logger = Logger(label: "sniffmeet.replay")
        let opened = try await database.open(logger: logger)
        defer { opened.close() }
        // Importing locks and fills the log: the owner's work. Reading needs only the runtime login.
        let connectionString = opened.readerConnectionString

        if let importFile {
            let connectionString = opened.ownerConnectionString
            let count = try await onThread("sniffmeet.replay") {
                guard let input = FileHandle(forReadingAtPath: importFile) else { throw ValidationError("cannot read \(importFile)") }
                return try ReplayImport.run(input, on: Connection(connectionString: connectionString))
            }
            print("imported \(count) events; run `sniffmeet rebuild --all` to build the read models")
            return
        }
        if let fold {
            let at = try Self.position(at, "at")
            let sealer = try opened.sealer()
            let result = try await onThread("sniffmeet.replay") {
                try StreamFold.run(stream: fold, at: at, sealer: sealer, on: Connection(connectionString: connectionString))
            }
            print("stream \(result.stream) at version \(result.version)" + (result.position.map { " (log position \($0))" } ?? " (empty)"))
            var text = ""
            dump(result.state, to: &text)
            print(text, terminator: "")
            return
        }
        let filter = ReplayFilter(
            streams: stream.isEmpty ? nil : stream,
            types: type.isEmpty ? nil : type,
            from: try Self.position(from, "from"),
            to: try Self.position(to, "to"),
            since: try Self.time(since, "since"),
            until: try Self.time(until, "until")
        )
        let path = output
        let count = try await onThread("sniffmeet.replay") {
            let out: FileHandle
            if let path {
                guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path)
                else { throw ValidationError("cannot write \(path)") }
                out = file
            } else {
                out = FileHandle.standardOutput
            }
            defer { if path != nil { try? out.close() } }
            return try ReplayExport.run(filter, on: Connection(connectionString: connectionString)) { try out.write(contentsOf: $0) }
        }
        if path != nil { print("exported \(count) events") }
    }
}
