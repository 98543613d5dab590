import Testing
import Tern

/// The error of type `E` that the `TernFailure` thrown by `body` wraps: Tern's public entry
/// points throw one error type, and the tests of the layers below check what it carries.
func requireUnderlying<E: Error>(_ type: E.Type, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) throws -> E {
    let failure = try #require(throws: TernFailure.self, sourceLocation: sourceLocation) { try body() }
    return try #require(failure.underlying as? E, "\(failure.underlying)", sourceLocation: sourceLocation)
}

/// What a `TernFailure` wraps, or the error itself when it is not one.
func underlying(_ error: any Error) -> any Error {
    (error as? TernFailure)?.underlying ?? error
}
