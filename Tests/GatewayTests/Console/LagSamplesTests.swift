import Foundation
import XCTest

@testable import Gateway

/// The projections page's lag charts: samples kept for an hour, drawn as SVG without styles.
final class LagSamplesTests: XCTestCase {
    func testSamplesOlderThanAnHourAreDropped() {
        let samples = LagSamples()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        samples.record([("safety", 5, 0.5), ("walks", 0, 0)], at: start)
        samples.record([("safety", 7, 0.7)], at: start.addingTimeInterval(1800))
        XCTAssertEqual(samples.samples(of: "safety").map(\.lagEvents), [5, 7])
        samples.record([("safety", 1, 0.1)], at: start.addingTimeInterval(3601))
        XCTAssertEqual(samples.samples(of: "safety").map(\.lagEvents), [7, 1])
        XCTAssertEqual(samples.samples(of: "walks").count, 1)
        XCTAssertEqual(samples.samples(of: "nope").count, 0)
    }

    func testChartsAreSVGWithEscapedTextAndNoStyles() {
        let svg = SVGChart.line([(3000, 10), (60, 2)], span: 3600, unit: "events", title: "<b>x</b>")
        XCTAssertTrue(svg.hasPrefix("<svg"))
        XCTAssertTrue(svg.contains("<polyline"))
        XCTAssertTrue(svg.contains("&lt;b&gt;x&lt;/b&gt;"))
        XCTAssertFalse(svg.contains("<b>"))
        XCTAssertFalse(svg.contains("style"))
        XCTAssertTrue(svg.contains("max 10 events"))
        XCTAssertTrue(SVGChart.line([], span: 3600, unit: "events", title: "t").contains("no samples yet"))
    }
}
