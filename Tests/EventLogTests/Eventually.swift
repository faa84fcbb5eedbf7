import XCTest

/// Waits until `condition` holds, polling; fails after 10 s. A loaded machine may take a while to
/// start the work a test waits for, and a fixed sleep would guess how long.
func eventually(_ condition: () -> Bool, file: StaticString = #filePath, line: UInt = #line) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            XCTFail("not within 10 s", file: file, line: line)
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}
