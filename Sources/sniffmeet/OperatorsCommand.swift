import ArgumentParser
import Foundation
import Gateway
import Logging
import Postgres

/// `sniffmeet operators add|remove|list|token NAME`: the console's operator accounts, managed
/// as the schema's owner (the server's runtime role may not add operators or issue tokens).
struct OperatorsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "operators",
        abstract: "Manage the operator console's accounts.",
        subcommands: [Add.self, Remove.self, List.self, Token.self]
    )

    /// Runs `body` on a connection of the owner's login.
    static func withOwner<T: Sendable>(
        _ database: DatabaseOptions,
        _ body: @escaping @Sendable (Connection) throws -> T
    ) async throws -> T {
        let logger = Logger(label: "sniffmeet.operators")
        let opened = try await database.open(logger: logger)
        defer { opened.close() }
        // A fresh database gets its schema first (as `serve` would), so the tables are there.
        _ = try await opened.migrate(logger: logger)
        let owner = opened.ownerConnectionString
        return try await onThread("operators") { try body(try Connection(connectionString: owner)) }
    }

    /// Failures as a message and exit code 1, not a stack of types.
    static func report<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let failure as OperatorStore.Failure {
            FileHandle.standardError.write(Data("error: \(failure)\n".utf8))
            throw ExitCode(1)
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an operator; prints the one-time link (24 hours) where they set a password."
        )
        @OptionGroup var database: DatabaseOptions
        @Option(
            name: .customLong("public-url"),
            help: "the server's public URL (default: $SNIFFMEET_PUBLIC_URL, else http://127.0.0.1:8080)"
        )
        var publicURL: String?
        @Argument(help: "the operator's name") var name: String

        func run() async throws {
            let name = self.name
            let link = try await OperatorsCommand.report {
                try await OperatorsCommand.withOwner(database) { try OperatorStore.add(name, on: $0) }
            }
            var settings = ConsoleSettings().applyingEnvironment(ProcessInfo.processInfo.environment)
            if let publicURL { settings.publicURL = publicURL }
            print(settings.passwordLink(link))
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an operator: their sessions end, their tokens stop working.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "the operator's name") var name: String

        func run() async throws {
            let name = self.name
            try await OperatorsCommand.report {
                try await OperatorsCommand.withOwner(database) { try OperatorStore.remove(name, on: $0) }
            }
            print("removed \(name)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the operators.")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let accounts = try await OperatorsCommand.withOwner(database) { try OperatorStore.list(on: $0) }
            for account in accounts {
                let password = account.hasPassword ? "password set" : "password not set"
                print("\(account.name)\t\(password)\tsessions \(account.sessions)\ttokens \(account.tokens)")
            }
        }
    }

    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Issue an API token for the JSON routes under /v1/admin.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "the operator's name") var name: String

        func run() async throws {
            let name = self.name
            let token = try await OperatorsCommand.report {
                try await OperatorsCommand.withOwner(database) { try OperatorStore.issueToken(name, on: $0) }
            }
            print(token)
        }
    }
}
