import Projections

/// An inbox entry as API.md shows it (its JSON is written in `NotificationRow+JSON.swift`).
public typealias NotificationJSON = NotificationRow
