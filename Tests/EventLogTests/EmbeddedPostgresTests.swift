import Foundation
import Postgres
import PostgresTesting
import XCTest

/// The embedded cluster keeps its trusting socket where only its owner can reach it, and
/// refuses folders that would let someone else in.
final class EmbeddedPostgresTests: XCTestCase {
    private var scratch: String!

    override func setUp() {
        scratch = "/tmp/sniffmeet-embed-\(getpid())-\(UUID().uuidString.prefix(8))"
        mkdir(scratch, 0o755)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: scratch)
    }

    func testTheSocketLivesInThePrivateDataFolder() throws {
        let server = try TestDatabase.embedded()
        XCTAssertEqual(server.socketDirectory, server.options.dataDirectory + "/run")
        for path in [server.options.dataDirectory, server.socketDirectory] {
            var info = stat()
            XCTAssertEqual(stat(path, &info), 0, path)
            XCTAssertEqual(info.st_mode & 0o777, 0o700, path)
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: server.socketDirectory + "/.s.PGSQL.5432"))
    }

    func testATooLongSocketPathIsRefusedUpFront() throws {
        let deep = scratch + "/" + String(repeating: "d", count: 100)
        XCTAssertThrowsError(try EmbeddedPostgres(.init(dataDirectory: deep))) { error in
            guard case EmbeddedPostgres.Failure.socketPathTooLong(let path) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, deep + "/run/.s.PGSQL.5432")
            XCTAssertTrue("\(error)".contains("shorter data folder"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: deep), "nothing was created")
    }

    func testADataFolderOthersCanEnterIsRefused() throws {
        let data = scratch + "/data"
        XCTAssertEqual(mkdir(data, 0o755), 0)
        chmod(data, 0o755)
        if geteuid() == 0, let postgres = getpwnam("postgres") { chown(data, postgres.pointee.pw_uid, postgres.pointee.pw_gid) }
        let server = try EmbeddedPostgres(.init(dataDirectory: data))
        XCTAssertThrowsError(try server.start()) { error in
            guard case EmbeddedPostgres.Failure.unsafeDirectory(let path, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, data)
            XCTAssertTrue(reason.contains("755"), reason)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: data + "/PG_VERSION"), "no cluster was created")
        var info = stat()
        stat(data, &info)
        XCTAssertEqual(info.st_mode & 0o777, 0o755, "the folder was left as it was")
    }

    func testAFolderOfSomeoneElseIsRefused() throws {
        // Only root can give a folder away.
        try XCTSkipUnless(geteuid() == 0, "needs root to make a folder that belongs to someone else")
        let stranger: uid_t = 54_321
        let data = scratch + "/data"
        XCTAssertEqual(mkdir(data, 0o700), 0)
        chown(data, stranger, stranger)
        XCTAssertThrowsError(try EmbeddedPostgres(.init(dataDirectory: data)).start()) { error in
            guard case EmbeddedPostgres.Failure.unsafeDirectory(let path, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, data)
            XCTAssertTrue(reason.contains("uid 54321"), reason)
        }
        var info = stat()
        stat(data, &info)
        XCTAssertEqual(info.st_uid, stranger, "the folder was not taken over")

        // The same for a socket folder inside an otherwise fine data folder.
        let other = scratch + "/other"
        let postgres = try XCTUnwrap(getpwnam("postgres") ?? getpwnam("nobody"))
        XCTAssertEqual(mkdir(other, 0o700), 0)
        chown(other, postgres.pointee.pw_uid, postgres.pointee.pw_gid)
        FileManager.default.createFile(atPath: other + "/PG_VERSION", contents: Data("15\n".utf8))
        XCTAssertEqual(mkdir(other + "/run", 0o700), 0)
        chown(other + "/run", stranger, stranger)
        XCTAssertThrowsError(try EmbeddedPostgres(.init(dataDirectory: other)).start()) { error in
            guard case EmbeddedPostgres.Failure.unsafeDirectory(let path, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, other + "/run")
        }
    }
}
