import Foundation
import XCTest

@testable import Domain

/// The fixed clock of all tests: 2027-01-15T08:00:00.000Z.
let t0 = Date(timeIntervalSince1970: 1_800_000_000)

func id(_ s: String) -> UUID { UUID(uuidString: s)! }

// Uppercase on purpose: everything written must come out lowercase.
let alice = id("A0000000-0000-4000-8000-00000000000A")
let bob = id("B0000000-0000-4000-8000-00000000000B")
let carol = id("C0000000-0000-4000-8000-00000000000C")
let request1 = id("D0000000-0000-4000-8000-000000000001")
let request2 = id("D0000000-0000-4000-8000-000000000002")
let walk1 = id("E0000000-0000-4000-8000-000000000001")
let walk2 = id("E0000000-0000-4000-8000-000000000002")

func profile(
    nickname: String = "Rex",
    dogName: String = "Bello",
    age: Int = 3,
    sex: Sex = .male,
    neutered: Bool = true,
    size: Size = .medium,
    keywords: [Keyword] = [.friendly, .smart],
    profileImage: String? = nil
) -> DogProfile {
    DogProfile(
        nickname: nickname,
        dogName: dogName,
        age: age,
        sex: sex,
        neutered: neutered,
        size: size,
        keywords: keywords,
        profileImage: profileImage
    )
}

/// A valid drop token handed out by `user` at `t0`.
func token(by user: UUID, issuedAt: Date = t0, used: Bool = false) -> PresentedDropToken {
    PresentedDropToken(issuedBy: user, expiresAt: issuedAt.addingTimeInterval(SniffMeet.dropTokenLifetime), used: used)
}

/// An in-memory log and command handler: loads streams as `SniffMeet.streams(for:loaded:)` asks,
/// decides, and appends — the protocol the real handler follows, without a database.
struct World {
    var log: [StreamName: [Event]] = [:]
    var now = t0
    var walkTTL: TimeInterval = 60

    func state(_ stream: StreamName) -> StreamState {
        SniffMeet.fold(stream, log[stream] ?? [])
    }

    func states(for command: Command) -> [StreamName: StreamState] {
        var loaded: [StreamName: StreamState] = [:]
        while true {
            let names = SniffMeet.streams(for: command, loaded: loaded)
            let missing = names.filter { loaded[$0] == nil }
            if missing.isEmpty { return loaded }
            for name in missing { loaded[name] = state(name) }
        }
    }

    func decide(_ command: Command) throws(DomainError) -> Decision {
        try SniffMeet.decide(command, states: states(for: command), context: DecisionContext(now: now, walkTTL: walkTTL))
    }

    @discardableResult
    mutating func run(_ command: Command) throws(DomainError) -> Decision {
        let decision = try decide(command)
        for (stream, event) in decision.events { log[stream, default: []].append(event) }
        return decision
    }

    var mates: MatesState { state(.mates(alice, bob)).mates! }
    func walk(_ id: UUID) -> WalkState { state(.walk(id)).walk! }

    /// Alice and Bob registered.
    static func registered() throws -> World {
        var w = World()
        try w.run(.registerUser(userID: alice, profile: profile(nickname: "Alice")))
        try w.run(.registerUser(userID: bob, profile: profile(nickname: "Bob", dogName: "Luna", sex: .female)))
        return w
    }

    /// Alice asked Bob (request1), pending.
    static func pending() throws -> World {
        var w = try registered()
        try w.run(.requestMate(requestID: request1, from: alice, to: bob, dropToken: token(by: bob)))
        return w
    }

    /// Alice and Bob are mates.
    static func mated() throws -> World {
        var w = try pending()
        try w.run(.acceptMate(requestID: request1, pair: MatePair(alice, bob), by: bob))
        return w
    }

    /// Alice sent Bob walk1 at t0, answerable for 60 s.
    static func walkPending() throws -> World {
        var w = try mated()
        try w.run(
            .sendWalk(walkID: walk1, from: alice, to: bob, message: "Park?", latitude: 52.52, longitude: 13.405, placeName: "Tiergarten")
        )
        return w
    }
}

/// Asserts that `body` is refused with `code` (and `field`, for validation errors).
func assertRefused(
    _ code: String,
    field: String? = nil,
    file: StaticString = #filePath,
    line: UInt = #line,
    _ body: () throws -> Void
) {
    do {
        try body()
        XCTFail("expected \(code), but the command was accepted", file: file, line: line)
    } catch let error as DomainError {
        XCTAssertEqual(error.code, code, error.message, file: file, line: line)
        if let field { XCTAssertEqual(error.field, field, file: file, line: line) }
    } catch {
        XCTFail("expected DomainError \(code), got \(error)", file: file, line: line)
    }
}
