/// One read-only statement and how to read its rows: what a read model offers and what the
/// pool may send in one pipeline with other waiting queries.
///
/// `read` runs on the connection's thread, where the result lives; it returns plain values.
public struct Query<Value>: Sendable {
    public let statement: Connection.Statement
    public let read: @Sendable (QueryResult) throws -> Value

    /// A query of a fixed SQL text (prepared once per connection unless told otherwise).
    public init(
        _ sql: String,
        _ parameters: [any PostgresEncodable] = [],
        prepared: Bool = true,
        read: @escaping @Sendable (QueryResult) throws -> Value
    ) {
        self.statement = Connection.Statement(sql, parameters, prepared: prepared)
        self.read = read
    }

    /// The same statement, its value passed through `transform` (still on the connection's thread).
    public func map<T>(_ transform: @escaping @Sendable (Value) throws -> T) -> Query<T> {
        let read = self.read
        return Query<T>(statement.sql, statement.parameters, prepared: statement.prepared) { try transform(try read($0)) }
    }
}

extension Connection {
    /// Runs `query` on this connection and reads its rows.
    public func run<Value>(_ query: Query<Value>) throws -> Value {
        try query.read(try execute(query.statement))
    }

    /// Runs one statement and returns its rows.
    @discardableResult
    public func execute(_ statement: Statement) throws -> QueryResult {
        try execute(statement.sql, statement.parameters, prepared: statement.prepared)
    }
}
