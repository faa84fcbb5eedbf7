import Foundation
import WalkRoutes

/// PROJ's `geod` (Debian `proj-bin`, installed by scripts/setup), the reference the distances are
/// checked against. All segments go through one run.
enum GeodReference {
    static let path = "/usr/bin/geod"

    struct Missing: Error, CustomStringConvertible {
        var description: String { "PROJ's geod is not at \(GeodReference.path): run scripts/setup (Debian proj-bin)" }
    }

    /// The distance in metres of each segment, from `geod -I` on WGS84.
    static func distances(_ segments: [(Coordinate, Coordinate)]) throws -> [Double] {
        guard FileManager.default.isExecutableFile(atPath: path) else { throw Missing() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["+ellps=WGS84", "-I", "+units=m", "-f", "%.10f", "-F", "%.6f"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var text = ""
        for (p, q) in segments {
            text += "\(p.latitude) \(p.longitude) \(q.latitude) \(q.longitude)\n"
        }
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        return try lines.map { line in
            guard let last = line.split(whereSeparator: { $0 == "\t" || $0 == " " }).last, let d = Double(last) else {
                throw Missing()
            }
            return d
        }
    }
}
