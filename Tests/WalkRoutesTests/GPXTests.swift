import Foundation
import WalkRoutes
import XCTest

final class GPXTests: XCTestCase {
    static let sample = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- recorded by a phone -->
        <gpx version="1.1" creator="Phone &amp; Co" xmlns="http://www.topografix.com/GPX/1/1">
          <metadata><name>Han river &#x1F415;</name></metadata>
          <wpt lat="1" lon="1"><time>2026-11-25T00:00:00Z</time></wpt>
          <trk><name>walk</name>
            <trkseg>
              <trkpt lat="37.5665" lon="126.9780"><ele>30</ele><time>2026-11-25T10:00:00Z</time></trkpt>
              <trkpt lat='37.5666' lon='126.9781'><time> 2026-11-25T10:00:05.5Z </time></trkpt>
            </trkseg>
            <trkseg>
              <trkpt lat="37.5667" lon="126.9782"><time>2026-11-25T19:00:10+09:00</time></trkpt>
            </trkseg>
          </trk>
        </gpx>
        """

    func parse(_ text: String) throws(GPXRefusal) -> [TrackPoint] {
        try GPX.parse(Array(text.utf8))
    }

    func testReadsEveryTrackPointInOrder() throws {
        let points = try parse(Self.sample)
        let t0 = try XCTUnwrap(RFC3339.parse(Array("2026-11-25T10:00:00Z".utf8)))
        XCTAssertEqual(
            points,
            [
                TrackPoint(time: t0, latitude: 37.5665, longitude: 126.9780),
                TrackPoint(time: t0 + 5.5, latitude: 37.5666, longitude: 126.9781),
                TrackPoint(time: t0 + 10, latitude: 37.5667, longitude: 126.9782),
            ]
        )
    }

    func testAByteOrderMarkIsAllowed() throws {
        let points = try GPX.parse([0xEF, 0xBB, 0xBF] + Array(Self.sample.utf8))
        XCTAssertEqual(points.count, 3)
    }

    func testWrittenFileReadsBack() throws {
        let points = [
            TrackPoint(time: 1_764_064_800, latitude: 37.5665, longitude: 126.978),
            TrackPoint(time: 1_764_064_801.25, latitude: -33.8688, longitude: 151.2093),
        ]
        let text = GPX.write(points, name: "Walk <with> \"Bori\" & Coco")
        XCTAssertTrue(text.contains("<gpx version=\"1.1\""))
        XCTAssertEqual(try parse(text), points)
    }

    /// "Billion laughs": refused at the DOCTYPE, before any entity is defined, let alone expanded.
    func testBillionLaughsIsRefusedUnexpanded() {
        var text = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n"
        for n in 1...9 {
            let previous = n == 1 ? "lol" : "lol\(n - 1)"
            text += "<!ENTITY lol\(n) \"" + String(repeating: "&\(previous);", count: 10) + "\">\n"
        }
        text += "]>\n<gpx version=\"1.1\"><trk><name>&lol9;</name></trk></gpx>"
        XCTAssertThrowsError(try parse(text)) { XCTAssertEqual($0 as? GPXRefusal, .doctype) }
    }

    /// An external entity naming a file that, were it read, would make the parse fail differently
    /// (it does not exist): the refusal is the DOCTYPE's, so nothing was read.
    func testExternalEntityIsRefusedUnread() {
        let text = """
            <?xml version="1.0"?>
            <!DOCTYPE gpx [<!ENTITY secret SYSTEM "file:///etc/shadow">]>
            <gpx version="1.1"><trk><name>&secret;</name></trk></gpx>
            """
        XCTAssertThrowsError(try parse(text)) { XCTAssertEqual($0 as? GPXRefusal, .doctype) }
    }

    func testUndeclaredEntityReferenceIsRefused() {
        let text = "<gpx version=\"1.1\"><trk><name>&lol;</name></trk></gpx>"
        XCTAssertThrowsError(try parse(text)) { XCTAssertEqual($0 as? GPXRefusal, .entity) }
        let inAttribute = "<gpx version=\"1.1\" creator=\"&xxe;\"></gpx>"
        XCTAssertThrowsError(try parse(inAttribute)) { XCTAssertEqual($0 as? GPXRefusal, .entity) }
    }

    func testLargerThanTwoMebibytesIsRefusedBeforeReading() {
        let bytes = [UInt8](repeating: UInt8(ascii: " "), count: GPX.maximumBytes + 1)
        XCTAssertThrowsError(try GPX.parse(bytes)) { XCTAssertEqual($0 as? GPXRefusal, .tooLarge) }
    }

    func testDeepNestingIsRefused() {
        let text = "<gpx>" + String(repeating: "<a>", count: 40) + String(repeating: "</a>", count: 40) + "</gpx>"
        XCTAssertThrowsError(try parse(text)) { XCTAssertEqual($0 as? GPXRefusal, .tooDeep) }
    }

    func testMoreThanTwentyThousandPointsIsRefused() {
        var text = "<gpx version=\"1.1\"><trk><trkseg>"
        for s in 0...GPX.maximumPoints {
            text += "<trkpt lat=\"37.5\" lon=\"127\"><time>\(RFC3339.format(1_764_064_800 + Double(s)))</time></trkpt>"
        }
        text += "</trkseg></trk></gpx>"
        XCTAssertThrowsError(try parse(text)) { XCTAssertEqual($0 as? GPXRefusal, .tooManyPoints) }
    }

    func testPointWithoutTimeOrWithBadCoordinatesIsRefused() {
        let noTime = "<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"></trkpt></trkseg></trk></gpx>"
        XCTAssertThrowsError(try parse(noTime)) { XCTAssertEqual($0 as? GPXRefusal, .point(index: 0)) }
        let nan = "<gpx><trk><trkseg><trkpt lat=\"NaN\" lon=\"2\"><time>2026-11-25T10:00:00Z</time></trkpt></trkseg></trk></gpx>"
        XCTAssertThrowsError(try parse(nan)) { XCTAssertEqual($0 as? GPXRefusal, .point(index: 0)) }
        let badTime = "<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time>yesterday</time></trkpt></trkseg></trk></gpx>"
        XCTAssertThrowsError(try parse(badTime)) { XCTAssertEqual($0 as? GPXRefusal, .point(index: 0)) }
    }

    func testMalformedDocumentsAreRefused() {
        for text in ["", "<gpx>", "<gpx></trk>", "<kml></kml>", "<gpx><trk a=b></trk></gpx>", "<gpx></gpx><gpx></gpx>", "junk<gpx></gpx>"] {
            XCTAssertThrowsError(try parse(text), text)
        }
    }

    func testRFC3339RoundTrip() throws {
        for text in ["1970-01-01T00:00:00Z", "2026-11-25T10:00:00Z", "2024-02-29T23:59:59.123Z", "1969-12-31T23:59:59Z"] {
            let t = try XCTUnwrap(RFC3339.parse(Array(text.utf8)), text)
            XCTAssertEqual(RFC3339.format(t), text)
        }
        XCTAssertEqual(RFC3339.parse(Array("2026-11-25T19:00:00+09:00".utf8)), RFC3339.parse(Array("2026-11-25T10:00:00Z".utf8)))
        for bad in ["2026-02-30T00:00:00Z", "2026-11-25 10:00:00Z", "2026-11-25T10:00:00", "2026-13-01T00:00:00Z"] {
            XCTAssertNil(RFC3339.parse(Array(bad.utf8)), bad)
        }
    }
}
