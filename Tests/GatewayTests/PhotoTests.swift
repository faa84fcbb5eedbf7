import Foundation
import HTTPTypes
import Hummingbird
import Photos
import XCTest

/// Profile photos (API.md, "Photos"): every route and answer, and every kind of bad upload
/// (each a 4xx that stores nothing). Test images are made at run time with libvips itself
/// (`SyntheticPhoto`); the hostile ones are those with a few bytes changed.
final class PhotoTests: XCTestCase {
    // MARK: Routes

    func testUploadServesFetchesReplacesAndDeletes() async throws {
        try await GatewayFixture("photos_routes").run { client in
            let ana = try await client.signUp("anaphoto")
            let jpeg = try SyntheticPhoto.make(width: 2000, height: 1500, .jpeg())

            XCTAssertError(try await client.upload(jpeg, token: nil), 401, "unauthorized")
            let put = try await client.upload(jpeg, token: ana.token)
            XCTAssertEqual(put.status, 200, put.text)
            XCTAssertNotNil(put.header("Log-Position"))
            let id = try XCTUnwrap(put.json["profile_image"] as? String)
            XCTAssertEqual(id, id.lowercased())
            XCTAssertEqual(put.json["dog_name"] as? String, "Bori")
            let me = try await client.send(.get, "/v1/me", token: ana.token, headers: ["Min-Log-Position": put.header("Log-Position")!])
            XCTAssertEqual(me.json["profile_image"] as? String, id)

            // Anyone holding the id: no token needed.
            let image = try await client.send(.get, "/v1/photos/\(id)")
            XCTAssertEqual(image.status, 200)
            XCTAssertEqual(image.header("Content-Type"), "image/jpeg")
            XCTAssertEqual(image.header("Cache-Control"), "public, max-age=31536000, immutable")
            XCTAssertEqual(image.header("X-Content-Type-Options"), "nosniff")
            let etag = try XCTUnwrap(image.header("ETag"))
            XCTAssertTrue(etag.hasPrefix("\"") && etag.hasSuffix("\"") && !etag.hasPrefix("W/"), etag)
            XCTAssertEqual(SyntheticPhoto.jpegSize(image.body)?.width, 1080)
            XCTAssertEqual(SyntheticPhoto.jpegSize(image.body)?.height, 810)

            let thumbnail = try await client.send(.get, "/v1/photos/\(id)/thumbnail")
            XCTAssertEqual(thumbnail.status, 200)
            XCTAssertEqual(thumbnail.header("Content-Type"), "image/jpeg")
            XCTAssertEqual(thumbnail.header("Cache-Control"), "public, max-age=31536000, immutable")
            let thumbnailTag = try XCTUnwrap(thumbnail.header("ETag"))
            XCTAssertNotEqual(thumbnailTag, etag)
            XCTAssertEqual(SyntheticPhoto.jpegSize(thumbnail.body)?.width, 200)
            XCTAssertEqual(SyntheticPhoto.jpegSize(thumbnail.body)?.height, 200)

            // Conditional requests: the client's copy is current.
            let notModified = try await client.send(.get, "/v1/photos/\(id)", headers: ["If-None-Match": etag])
            XCTAssertEqual(notModified.status, 304)
            XCTAssertTrue(notModified.body.isEmpty)
            XCTAssertEqual(notModified.header("ETag"), etag)
            XCTAssertEqual(notModified.header("Cache-Control"), "public, max-age=31536000, immutable")
            let listed = try await client.send(.get, "/v1/photos/\(id)", headers: ["If-None-Match": "\"other\", W/\(etag)"])
            XCTAssertEqual(listed.status, 304, "weak comparison, any tag of the list")
            do {
                let status = try await client.send(.get, "/v1/photos/\(id)", headers: ["If-None-Match": "*"]).status
                XCTAssertEqual(status, 304)
            }
            let thumbnailNotModified = try await client.send(.get, "/v1/photos/\(id)/thumbnail", headers: ["If-None-Match": thumbnailTag])
            XCTAssertEqual(thumbnailNotModified.status, 304)
            let otherCopy = try await client.send(.get, "/v1/photos/\(id)/thumbnail", headers: ["If-None-Match": etag])
            XCTAssertEqual(otherCopy.status, 200, "the image's tag is not the thumbnail's")
            XCTAssertEqual(otherCopy.body, thumbnail.body)
            let stale = try await client.send(.get, "/v1/photos/\(id)", headers: ["If-None-Match": "\"0123456789abcdef0123456789abcdef\""])
            XCTAssertEqual(stale.status, 200)
            XCTAssertEqual(stale.body, image.body)

            // Unknown or malformed ids, and the route without an id, reveal nothing.
            XCTAssertError(try await client.send(.get, "/v1/photos/\(UUID().uuidString.lowercased())"), 404, "not_found")
            XCTAssertError(try await client.send(.get, "/v1/photos/not-a-uuid"), 404, "not_found")
            XCTAssertError(try await client.send(.get, "/v1/photos/not-a-uuid/thumbnail"), 404, "not_found")
            XCTAssertError(try await client.send(.get, "/v1/photos"), 404, "not_found")
            XCTAssertError(try await client.send(.get, "/v1/photos/"), 404, "not_found")

            // A new upload replaces the old photo, which is gone at once.
            let second = try await client.upload(
                try SyntheticPhoto.make(width: 300, height: 200, .png),
                type: "image/png",
                token: ana.token
            )
            XCTAssertEqual(second.status, 200, second.text)
            let secondID = try XCTUnwrap(second.json["profile_image"] as? String)
            XCTAssertNotEqual(secondID, id)
            XCTAssertError(try await client.send(.get, "/v1/photos/\(id)"), 404, "not_found")
            XCTAssertError(try await client.send(.get, "/v1/photos/\(id)/thumbnail"), 404, "not_found")
            do {
                let status = try await client.send(.get, "/v1/photos/\(secondID)").status
                XCTAssertEqual(status, 200)
            }
            XCTAssertEqual(try client.photoCount(of: ana), 1)

            // DELETE /v1/me/photo: off the card and out of the database.
            let removed = try await client.send(.delete, "/v1/me/photo", token: ana.token)
            XCTAssertEqual(removed.status, 200, removed.text)
            XCTAssertTrue(removed.json["profile_image"] is NSNull, removed.text)
            XCTAssertNotNil(removed.header("Log-Position"))
            XCTAssertError(try await client.send(.get, "/v1/photos/\(secondID)"), 404, "not_found")
            XCTAssertEqual(try client.photoCount(of: ana), 0)
            let again = try await client.send(.delete, "/v1/me/photo", token: ana.token)
            XCTAssertEqual(again.status, 200, "removing no photo is fine")
            XCTAssertError(try await client.send(.delete, "/v1/me/photo"), 401, "unauthorized")
        }
    }

    func testEveryFormatIsAcceptedAndServedAsJPEG() async throws {
        try await GatewayFixture("photos_formats").run { client in
            let bo = try await client.signUp("bophoto")
            let uploads: [(String, Data)] = [
                ("image/jpeg", try SyntheticPhoto.make(width: 640, height: 480, .jpeg())),
                ("image/png", try SyntheticPhoto.make(width: 320, height: 240, .png, alpha: true)),
                ("image/webp", try SyntheticPhoto.make(width: 320, height: 240, .webp())),
                ("image/heic", try SyntheticPhoto.make(width: 320, height: 240, .heif())),
                ("IMAGE/JPEG; charset=binary", try SyntheticPhoto.make(width: 100, height: 60, .jpeg())),
            ]
            for (type, bytes) in uploads {
                let put = try await client.upload(bytes, type: type, token: bo.token)
                XCTAssertEqual(put.status, 200, "\(type): \(put.text)")
                let id = try XCTUnwrap(put.json["profile_image"] as? String)
                let image = try await client.send(.get, "/v1/photos/\(id)")
                XCTAssertEqual(image.status, 200, type)
                XCTAssertNotNil(SyntheticPhoto.jpegSize(image.body), "\(type) is served as JPEG")
                let thumbnail = try await client.send(.get, "/v1/photos/\(id)/thumbnail")
                XCTAssertEqual(SyntheticPhoto.jpegSize(thumbnail.body)?.width, 200)
            }
            // A small image is never enlarged.
            let small = try await client.upload(try SyntheticPhoto.make(width: 100, height: 60, .jpeg()), token: bo.token)
            let image = try await client.send(.get, "/v1/photos/\(small.json["profile_image"] as! String)")
            XCTAssertEqual(SyntheticPhoto.jpegSize(image.body)?.width, 100)
            XCTAssertEqual(SyntheticPhoto.jpegSize(image.body)?.height, 60)
        }
    }

    // MARK: Metadata and orientation

    func testGPSMetadataIsNeverServedAndOrientationIsApplied() async throws {
        try await GatewayFixture("photos_exif").run { client in
            let cy = try await client.signUp("cyphoto")
            let plain = try SyntheticPhoto.make(width: 600, height: 400, .jpeg())
            let tagged = JPEGBytes.withEXIF(plain, orientation: 6)
            XCTAssertTrue(tagged.contains(Data("SniffCam".utf8)) && JPEGBytes.hasEXIF(tagged), "the upload carries EXIF with GPS")

            let put = try await client.upload(tagged, token: cy.token)
            XCTAssertEqual(put.status, 200, put.text)
            let id = try XCTUnwrap(put.json["profile_image"] as? String)
            for path in ["/v1/photos/\(id)", "/v1/photos/\(id)/thumbnail"] {
                let served = try await client.send(.get, path)
                XCTAssertEqual(served.status, 200)
                XCTAssertFalse(JPEGBytes.hasEXIF(served.body), "\(path) has an APP1 segment")
                XCTAssertFalse(JPEGBytes.markers(served.body).contains { (0xE1...0xEF).contains($0) || $0 == 0xFE }, path)
                XCTAssertNil(served.body.range(of: Data("Exif".utf8)), path)
                XCTAssertNil(served.body.range(of: Data("SniffCam".utf8)), path)
            }
            // Orientation 6: the 600 x 400 pixels are shown turned a quarter clockwise.
            let image = try await client.send(.get, "/v1/photos/\(id)")
            XCTAssertEqual(SyntheticPhoto.jpegSize(image.body)?.width, 400)
            XCTAssertEqual(SyntheticPhoto.jpegSize(image.body)?.height, 600)
        }
    }

    // MARK: Bad uploads

    func testBadUploadsAre4xxAndStoreNothing() async throws {
        try await GatewayFixture("photos_bad").run { client in
            let dee = try await client.signUp("deephoto")
            let jpeg = try SyntheticPhoto.make(width: 600, height: 400, .jpeg())
            let png = try SyntheticPhoto.make(width: 64, height: 48, .png)
            let events = try client.eventCount()

            // Wrong Content-Type: missing, another type, another image type, or not the bytes' type.
            XCTAssertError(try await client.upload(jpeg, type: nil, token: dee.token), 415, "unsupported_image")
            XCTAssertError(try await client.upload(jpeg, type: "application/octet-stream", token: dee.token), 415, "unsupported_image")
            XCTAssertError(try await client.upload(jpeg, type: "application/json", token: dee.token), 415, "unsupported_image")
            XCTAssertError(try await client.upload(jpeg, type: "image/svg+xml", token: dee.token), 415, "unsupported_image")
            XCTAssertError(try await client.upload(jpeg, type: "image/png", token: dee.token), 415, "unsupported_image")
            XCTAssertError(try await client.upload(png, type: "image/heic", token: dee.token), 415, "unsupported_image")

            // Animated and multi-page files.
            let gif = try SyntheticPhoto.make(width: 40, height: 30, .gif, pages: 3)
            XCTAssertError(try await client.upload(gif, type: "image/gif", token: dee.token), 415, "unsupported_image")
            XCTAssertError(try await client.upload(gif, type: "image/jpeg", token: dee.token), 400, "invalid_image")
            let webp = WebPBytes.animated(try SyntheticPhoto.make(width: 40, height: 30, .webp()), frames: 3)
            XCTAssertError(try await client.upload(webp, type: "image/webp", token: dee.token), 415, "unsupported_image")
            let heif = try SyntheticPhoto.make(width: 64, height: 64, .heif(), pages: 2)
            XCTAssertError(try await client.upload(heif, type: "image/heic", token: dee.token), 415, "unsupported_image")
            XCTAssertError(try await client.upload(PNGBytes.animated(png), type: "image/png", token: dee.token), 415, "unsupported_image")

            // Not an image; an empty body; a truncated one; corrupt data after a good header.
            XCTAssertError(try await client.upload(Data("hello, I am text".utf8), token: dee.token), 400, "invalid_image")
            XCTAssertError(try await client.upload(Data(), token: dee.token), 400, "invalid_image")
            XCTAssertError(try await client.upload(Data([0xFF, 0xD8, 0xFF]), token: dee.token), 400, "invalid_image")
            XCTAssertError(try await client.upload(jpeg.prefix(jpeg.count / 2), token: dee.token), 400, "invalid_image")
            XCTAssertError(try await client.upload(png.prefix(png.count / 2), type: "image/png", token: dee.token), 400, "invalid_image")

            // Image bombs: a few hundred bytes whose header declares far more pixels than allowed.
            let tiny = try SyntheticPhoto.make(width: 8, height: 8, .png)
            let pngBomb = PNGBytes.resized(tiny, width: 100_000, height: 100_000)
            XCTAssertLessThan(pngBomb.count, 2000)
            XCTAssertError(try await client.upload(pngBomb, type: "image/png", token: dee.token), 400, "invalid_image")
            let justOver = PNGBytes.resized(tiny, width: 10_000, height: 5_001)
            XCTAssertError(try await client.upload(justOver, type: "image/png", token: dee.token), 400, "invalid_image")
            let jpegBomb = JPEGBytes.resized(try SyntheticPhoto.make(width: 16, height: 16, .jpeg()), width: 65_000, height: 65_000)
            XCTAssertError(try await client.upload(jpegBomb, token: dee.token), 400, "invalid_image")

            // Polyglots: other formats under an image type, and formats libvips could read but
            // must not (SVG, PDF, GIF, TIFF, BMP).
            let svg = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"><rect/></svg>"#.utf8)
            XCTAssertError(try await client.upload(svg, type: "image/png", token: dee.token), 400, "invalid_image")
            XCTAssertError(try await client.upload(svg, type: "image/svg+xml", token: dee.token), 415, "unsupported_image")
            let pdf = Data("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n".utf8)
            XCTAssertError(try await client.upload(pdf, type: "image/jpeg", token: dee.token), 400, "invalid_image")
            let tiff = Data([0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08] + [UInt8](repeating: 0, count: 64))
            XCTAssertError(try await client.upload(tiff, type: "image/heic", token: dee.token), 400, "invalid_image")
            let bmp = Data(Array("BM".utf8) + [UInt8](repeating: 0, count: 64))
            XCTAssertError(try await client.upload(bmp, type: "image/webp", token: dee.token), 400, "invalid_image")
            // An ISO media file that is no HEIF image (an MP4 video).
            let mp4 = Data([0, 0, 0, 0x18] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isomiso2".utf8))
            XCTAssertError(try await client.upload(mp4, type: "image/heic", token: dee.token), 400, "invalid_image")

            // Over 10 MiB.
            var huge = jpeg
            huge.append(Data(count: 11 * 1024 * 1024 - jpeg.count))
            XCTAssertError(try await client.upload(huge, token: dee.token), 413, "body_too_large")

            XCTAssertEqual(try client.sql("SELECT count(*) FROM photos").first?.first, "0", "nothing stored")
            XCTAssertEqual(try client.eventCount(), events, "nothing appended")
            let projected = try await client.profileStatus(token: dee.token)
            XCTAssertEqual(projected, 200)
            let me = try await client.send(.get, "/v1/me", token: dee.token)
            XCTAssertTrue(me.json["profile_image"] is NSNull, me.text)
        }
    }

    /// A JPEG with something else after its end (a ZIP, a script): the served copy is made of
    /// pixels only, so nothing of the rest survives.
    func testTrailingPolyglotPayloadIsNotServed() async throws {
        try await GatewayFixture("photos_polyglot").run { client in
            let eve = try await client.signUp("evephoto")
            var polyglot = try SyntheticPhoto.make(width: 320, height: 200, .jpeg())
            polyglot.append(Data("<html><script>alert('xss')</script></html>PK\u{03}\u{04}zipzipzip".utf8))
            let put = try await client.upload(polyglot, token: eve.token)
            XCTAssertEqual(put.status, 200, put.text)
            let served = try await client.send(.get, "/v1/photos/\(put.json["profile_image"] as! String)")
            XCTAssertEqual(served.status, 200)
            XCTAssertNil(served.body.range(of: Data("<script>".utf8)))
            XCTAssertNil(served.body.range(of: Data("zipzip".utf8)))
            XCTAssertEqual(served.body.suffix(2), Data([0xFF, 0xD9]), "ends where the JPEG ends")

            // Corrupt scan data: libjpeg's recovery makes some picture of it (as browsers do),
            // which is served as a fresh JPEG; either way never a 5xx.
            var garbled = try SyntheticPhoto.make(width: 320, height: 200, .jpeg())
            for index in stride(from: garbled.count / 3, to: garbled.count - 2, by: 7) { garbled[index] = 0xFF }
            let answer = try await client.upload(garbled, token: eve.token)
            XCTAssertTrue([200, 400].contains(answer.status), answer.text)
        }
    }

    // MARK: Profiles and accounts

    func testProfileImageIsOnlyMyOwnPhotoOrNull() async throws {
        try await GatewayFixture("photos_profile").run { client in
            let fay = try await client.signUp("fayphoto")
            let gus = try await client.signUp("gusphoto")
            let jpeg = try SyntheticPhoto.make(width: 300, height: 300, .jpeg())
            let fays = try await client.uploadedID(jpeg, token: fay.token)
            let guss = try await client.uploadedID(jpeg, token: gus.token)
            let events = try client.eventCount()

            for bad in [#""choco.png""#, #""\#(guss)""#, #""\#(UUID().uuidString.lowercased())""#, #""""#, "12"] {
                XCTAssertError(
                    try await client.send(.patch, "/v1/me", token: fay.token, json: #"{"profile_image": \#(bad), "age": 9}"#),
                    400,
                    "validation_failed",
                    field: "profile_image"
                )
            }
            XCTAssertEqual(try client.eventCount(), events, "nothing appended")
            do {
                let status = try await client.send(.get, "/v1/photos/\(guss)").status
                XCTAssertEqual(status, 200, "someone else's photo stays theirs")
            }

            let same = try await client.send(.patch, "/v1/me", token: fay.token, json: #"{"profile_image": "\#(fays.uppercased())"}"#)
            XCTAssertEqual(same.status, 200, same.text)
            XCTAssertEqual(same.json["profile_image"] as? String, fays)
            do {
                let status = try await client.send(.get, "/v1/photos/\(fays)").status
                XCTAssertEqual(status, 200)
            }

            let cleared = try await client.send(.patch, "/v1/me", token: fay.token, json: #"{"profile_image": null}"#)
            XCTAssertEqual(cleared.status, 200, cleared.text)
            XCTAssertTrue(cleared.json["profile_image"] is NSNull)
            XCTAssertError(try await client.send(.get, "/v1/photos/\(fays)"), 404, "not_found")
            XCTAssertEqual(try client.photoCount(of: fay), 0)

            // A new account has no photo yet.
            XCTAssertError(
                try await client.send(
                    .post,
                    "/v1/users",
                    json:
                        #"{"nickname": "hopphoto", "dog_name": "Bori", "age": 3, "sex": "female", "neutered": true, "size": "small", "keywords": ["smart"], "profile_image": "\#(guss)"}"#
                ),
                400,
                "validation_failed",
                field: "profile_image"
            )
        }
    }

    func testDeletingAnAccountDeletesItsPhotos() async throws {
        try await GatewayFixture("photos_erasure").run { client in
            let ivy = try await client.signUp("ivyphoto")
            let jon = try await client.signUp("jonphoto")
            let jpeg = try SyntheticPhoto.make(width: 300, height: 200, .jpeg())
            let ivys = try await client.uploadedID(jpeg, token: ivy.token)
            let jons = try await client.uploadedID(jpeg, token: jon.token)
            do {
                let status = try await client.send(.delete, "/v1/me", token: ivy.token).status
                XCTAssertEqual(status, 204)
            }
            XCTAssertError(try await client.send(.get, "/v1/photos/\(ivys)"), 404, "not_found")
            XCTAssertError(try await client.send(.get, "/v1/photos/\(ivys)/thumbnail"), 404, "not_found")
            XCTAssertEqual(try client.photoCount(of: ivy), 0)
            do {
                let status = try await client.send(.get, "/v1/photos/\(jons)").status
                XCTAssertEqual(status, 200, "others keep theirs")
            }
            XCTAssertError(try await client.upload(jpeg, token: ivy.token), 401, "unauthorized")
        }
    }

    // MARK: Workers

    /// Past `workers + queueLimit` uploads in flight, the next one is refused at once (503)
    /// instead of queueing without bound.
    func testAFullQueueRefusesAtOnce() async throws {
        let processor = PhotoProcessor(workers: 1, queueLimit: 1)
        let releases = (0..<2).map { _ in AsyncStream<Void>.makeStream() }
        let (entered, enter) = AsyncStream<Void>.makeStream()
        let holders = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (release, _) in releases {
                    group.addTask {
                        try await processor.withSlot { _ in
                            enter.yield()
                            for await _ in release { break }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        var iterator = entered.makeAsyncIterator()
        _ = await iterator.next()
        _ = await iterator.next()
        XCTAssertEqual(processor.inFlight, 2)
        do {
            try await processor.withSlot { _ in XCTFail("a third slot") }
            XCTFail("expected busy")
        } catch PhotoError.busy {
        }
        for (_, releaser) in releases { releaser.finish() }
        try await holders.value
        XCTAssertEqual(processor.inFlight, 0)
        let small = try SyntheticPhoto.make(width: 50, height: 40, .jpeg())
        let photo = try await processor.withSlot { slot in try await slot.process(small, as: .jpeg) }
        XCTAssertEqual(photo.width, 50)
    }
}

extension GatewayFixture.Client {
    /// `PUT /v1/me/photo` with raw bytes; `type` nil sends no Content-Type at all.
    func upload(
        _ bytes: Data,
        type: String? = "image/jpeg",
        token: String?,
        headers extra: [String: String] = [:]
    ) async throws -> GatewayFixture.Reply {
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        if let type { headers[.contentType] = type }
        for (name, value) in extra { headers[HTTPField.Name(name)!] = value }
        let response = try await raw.executeRequest(uri: "/v1/me/photo", method: .put, headers: headers, body: ByteBuffer(bytes: bytes))
        return GatewayFixture.Reply(status: response.status.code, headers: response.headers, body: Data(response.body.readableBytesView))
    }

    /// Uploads `bytes` as a JPEG and returns the new photo's id.
    func uploadedID(_ bytes: Data, token: String) async throws -> String {
        let reply = try await upload(bytes, token: token)
        XCTAssertEqual(reply.status, 200, reply.text)
        return try XCTUnwrap(reply.json["profile_image"] as? String)
    }

    func photoCount(of user: GatewayFixture.User) throws -> Int {
        Int(try sql("SELECT count(*) FROM photos WHERE owner = $1", [user.id]).first?.first.flatMap { $0 } ?? "") ?? -1
    }

    func eventCount() throws -> Int {
        Int(try sql("SELECT count(*) FROM events").first?.first.flatMap { $0 } ?? "") ?? -1
    }
}

/// JPEG surgery for tests: markers, an EXIF block with GPS, a forged frame size.
enum JPEGBytes {
    /// The marker bytes (after `FF`) of the segments before the scan data.
    static func markers(_ jpeg: Data) -> [UInt8] {
        let bytes = [UInt8](jpeg)
        var markers: [UInt8] = []
        var index = 2
        while index + 4 <= bytes.count, bytes[index] == 0xFF {
            let marker = bytes[index + 1]
            markers.append(marker)
            if marker == 0xDA { break }
            index += 2 + Int(bytes[index + 2]) << 8 + Int(bytes[index + 3])
        }
        return markers
    }

    static func hasEXIF(_ jpeg: Data) -> Bool { markers(jpeg).contains(0xE1) }

    /// `jpeg` with an APP1 EXIF segment after its SOI (and JFIF APP0): camera make "SniffCam",
    /// `orientation`, and a GPS position (37°33'12.34" N, 126°58'45.67" E).
    static func withEXIF(_ jpeg: Data, orientation: UInt16) -> Data {
        var tiff: [UInt8] = Array("MM".utf8) + [0x00, 0x2A] + be32(8)
        func entry(_ tag: UInt16, _ type: UInt16, _ count: UInt32, _ value: [UInt8]) -> [UInt8] {
            be16(tag) + be16(type) + be32(count) + value + [UInt8](repeating: 0, count: 4 - value.count)
        }
        // IFD0 at 8: 3 entries (ends at 50); "SniffCam\0" at 50 (padded to 60); GPS IFD at 60:
        // 5 entries (ends at 126); latitude at 126, longitude at 150.
        tiff += be16(3)
        tiff += entry(0x010F, 2, 9, be32(50))  // Make
        tiff += entry(0x0112, 3, 1, be16(orientation))  // Orientation
        tiff += entry(0x8825, 4, 1, be32(60))  // GPSInfo IFD
        tiff += be32(0)
        tiff += Array("SniffCam".utf8) + [0, 0]
        tiff += be16(5)
        tiff += entry(0x0000, 1, 4, [2, 2, 0, 0])  // GPSVersionID
        tiff += entry(0x0001, 2, 2, Array("N".utf8) + [0])  // GPSLatitudeRef
        tiff += entry(0x0002, 5, 3, be32(126))  // GPSLatitude
        tiff += entry(0x0003, 2, 2, Array("E".utf8) + [0])  // GPSLongitudeRef
        tiff += entry(0x0004, 5, 3, be32(150))  // GPSLongitude
        tiff += be32(0)
        for (numerator, denominator) in [(37, 1), (33, 1), (1234, 100), (126, 1), (58, 1), (4567, 100)] as [(UInt32, UInt32)] {
            tiff += be32(numerator) + be32(denominator)
        }
        precondition(tiff.count == 174)
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let segment: [UInt8] = [0xFF, 0xE1] + be16(UInt16(payload.count + 2)) + payload
        var bytes = [UInt8](jpeg)
        var at = 2
        if bytes[2] == 0xFF, bytes[3] == 0xE0 { at = 4 + Int(bytes[4]) << 8 + Int(bytes[5]) }
        bytes.insert(contentsOf: segment, at: at)
        return Data(bytes)
    }

    /// `jpeg` with its frame header (SOF0/SOF2) declaring `width` × `height`, pixels unchanged.
    static func resized(_ jpeg: Data, width: UInt16, height: UInt16) -> Data {
        var bytes = [UInt8](jpeg)
        var index = 2
        while index + 9 <= bytes.count, bytes[index] == 0xFF {
            let marker = bytes[index + 1]
            if marker == 0xC0 || marker == 0xC2 {
                bytes.replaceSubrange(index + 5..<index + 9, with: be16(height) + be16(width))
                return Data(bytes)
            }
            index += 2 + Int(bytes[index + 2]) << 8 + Int(bytes[index + 3])
        }
        preconditionFailure("no frame header")
    }
}

/// WebP surgery for tests: an animation made of a still's frame.
enum WebPBytes {
    /// A `frames`-frame animated WebP (VP8X with the animation flag, ANIM, one ANMF per frame)
    /// whose every frame is the image chunk of `still`.
    static func animated(_ still: Data, frames: Int) -> Data {
        let bytes = [UInt8](still)
        var index = 12
        var image: [UInt8] = []
        var (width, height) = (0, 0)
        while index + 8 <= bytes.count {
            let type = String(decoding: bytes[index..<index + 4], as: UTF8.self)
            let size = Int(bytes[index + 4]) | Int(bytes[index + 5]) << 8 | Int(bytes[index + 6]) << 16 | Int(bytes[index + 7]) << 24
            let padded = size + size % 2
            if type == "VP8X" {
                width = 1 + (Int(bytes[index + 12]) | Int(bytes[index + 13]) << 8 | Int(bytes[index + 14]) << 16)
                height = 1 + (Int(bytes[index + 15]) | Int(bytes[index + 16]) << 8 | Int(bytes[index + 17]) << 16)
            }
            if type == "VP8 " {
                image = Array(bytes[index..<index + 8 + padded])
                // The frame header: a start code, then 14-bit width and height.
                width = (Int(bytes[index + 14]) | Int(bytes[index + 15]) << 8) & 0x3FFF
                height = (Int(bytes[index + 16]) | Int(bytes[index + 17]) << 8) & 0x3FFF
            }
            index += 8 + padded
        }
        precondition(!image.isEmpty && width > 0 && height > 0, "a lossy still")
        func le(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(value >> (8 * $0) & 0xFF) } }
        func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
            Array(type.utf8) + le(body.count, 4) + body + (body.count % 2 == 1 ? [0] : [])
        }
        var body = Array("WEBP".utf8)
        body += chunk("VP8X", [0x02, 0, 0, 0] + le(width - 1, 3) + le(height - 1, 3))
        body += chunk("ANIM", [0, 0, 0, 0] + le(0, 2))
        for _ in 0..<frames {
            body += chunk("ANMF", le(0, 3) + le(0, 3) + le(width - 1, 3) + le(height - 1, 3) + le(100, 3) + [0] + image)
        }
        return Data(Array("RIFF".utf8) + le(body.count, 4) + body)
    }
}

/// PNG surgery for tests: a forged header size, an animation control chunk.
enum PNGBytes {
    /// `png` with its IHDR declaring `width` × `height` (CRC fixed), pixel data unchanged.
    static func resized(_ png: Data, width: UInt32, height: UInt32) -> Data {
        var bytes = [UInt8](png)
        // Signature (8), IHDR length (4), "IHDR" (4), then width and height.
        bytes.replaceSubrange(16..<24, with: be32(width) + be32(height))
        bytes.replaceSubrange(29..<33, with: be32(crc32(bytes[12..<29])))
        return Data(bytes)
    }

    /// `png` with an `acTL` chunk after IHDR: an APNG (whose first frame is the image itself).
    static func animated(_ png: Data) -> Data {
        var bytes = [UInt8](png)
        let body = Array("acTL".utf8) + be32(2) + be32(0)
        bytes.insert(contentsOf: be32(8) + body + be32(crc32(body[...])), at: 33)
        return Data(bytes)
    }

    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

private func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
private func be32(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
}
