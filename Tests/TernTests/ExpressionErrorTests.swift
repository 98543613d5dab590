import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernSQLite

@Suite("Expression and predicate errors say where and what was expected")
struct ExpressionErrorTests {
    static let bookStore = try! ModelLoader.load(Configs.path("bookstore"))

    private func expressionError(_ text: String, entity: String = "Book", version: Int = 1) -> ExpressionError? {
        do {
            _ = try ExpressionBinder.expression(text, entity: entity, model: Self.bookStore.versions[version])
            return nil
        } catch {
            return error
        }
    }

    private func predicateError(_ text: String, entity: String = "Book") -> ExpressionError? {
        do {
            _ = try ExpressionBinder.predicate(text, entity: entity, model: Self.bookStore.versions[1])
            return nil
        } catch {
            return error
        }
    }

    @Test("a MATCHES that runs past its time limit over one value is stopped, naming the pattern; within it, it answers")
    func regexTimeLimit() throws {
        let text = String(repeating: "x", count: 20_000)
        #expect(throws: RegexCache.TooSlow.self) {
            _ = try TextFunctions.matches(text, pattern: "(x+x+)+y", options: [], cache: RegexCache(), limit: .milliseconds(20))
        }
        #expect(try TextFunctions.matches(text, pattern: "x+", options: [], cache: RegexCache(), limit: .seconds(2)))
        #expect(try !TextFunctions.matches("xy", pattern: "x", options: [], cache: RegexCache()))
    }

    @Test("syntax errors give line:column and what was expected")
    func syntax() {
        #expect(expressionError("($source.price - 32.0")?.description == "1:22: expected ')' to close the parenthesis, found the end")
        #expect(
            expressionError("$source.price *")?.description
                == "1:16: expected a value: a number, a string, a key path, $variable, YES/NO, nil, a function or '(', found the end")
        #expect(predicateError("price >")?.position == SourcePosition(offset: 7, in: "price >"))
        #expect(predicateError("price\n  ~ 3")?.description.hasPrefix("2:3: unexpected character '~'") == true)
        #expect(predicateError("title BEGINSWITH[x] 'a'")?.message == "expected comparison options c, d or cd, found x")
        #expect(predicateError("title == 'unterminated")?.message.hasPrefix("unterminated string") == true)
        #expect(predicateError("price BETWEEN 1")?.message == "BETWEEN takes two bounds in braces: {low, high}")
    }

    @Test("an unknown key path names the entity and lists its properties")
    func unknownKey() {
        #expect(expressionError("$source.titel")?.message == "entity Book has no property titel (it has: author, category, pages, price, title)")
        #expect(expressionError("$source.category.nmae")?.message == "entity Category has no property nmae (it has: books, name)")
        #expect(expressionError("$source.pages")?.message == "Book.pages is a to-many relationship: use pages.@count, or ANY/ALL/NONE in a predicate")
        #expect(expressionError("$source.title.length")?.message == "Book.title is an attribute: it has no key length")
    }

    @Test("reserved words must be escaped with #")
    func reserved() {
        #expect(expressionError("$source.size")?.message == "size is a reserved word: write #size to use it as a key")
        let model = ObjectModel(versionName: "v", entities: [Entity(name: "Box", attributes: [Attribute(name: "size", type: .integer32)])])
        #expect((try? ExpressionBinder.expression("$source.#size * 2", entity: "Box", model: model)) != nil)
    }

    @Test("kind errors say which side is wrong")
    func kinds() {
        #expect(expressionError("$source.title * 1.04")?.message == "* needs numbers, but this is a string")
        #expect(predicateError("title > 3")?.message == "cannot compare a string with a number")
        #expect(predicateError("price CONTAINS 'x'")?.message == "CONTAINS needs strings, but this is a number")
        #expect(expressionError("uppercase:($source.price)")?.message == "argument 1 of uppercase: must be a string, not a number")
        #expect(expressionError("reverse:($source.title)")?.message.hasPrefix("unknown function reverse: (known: uppercase:, lowercase:, length:") == true)
        #expect(predicateError("ANY pages.text == text")?.message == "inside ANY/ALL/NONE the value compared with the elements must be a constant")
        #expect(predicateError("ANY price > 3")?.message == "ANY needs a key path through a to-many relationship of Book, such as pages.text")
    }

    @Test("FUNCTION accepts only the documented selectors, and only in relationship mappings")
    func managerFunctions() throws {
        let error = try #require(expressionError(#"FUNCTION($manager, "performSelector:", "x", $source.pages)"#))
        #expect(error.message.hasPrefix("FUNCTION accepts only \"destinationInstancesForEntityMappingNamed:sourceInstances:\""))
        let parsed = try ExpressionParser.expression(
            #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.staff)"#)
        guard case .managerFunction(_, let selector, let arguments, _) = parsed else {
            Issue.record("not a manager function: \(parsed)")
            return
        }
        #expect(selector == ManagerFunction.destinationInstancesForEntityMapping.rawValue)
        #expect(arguments.count == 2)
        #expect(
            expressionError(#"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PageToPage", $source.pages)"#)?.message
                .hasSuffix("it belongs in a relationship mapping, not in a value") == true)
        #expect(expressionError("$destination.title")?.message == "$destination.… cannot be read: value expressions read $source key paths")
        #expect(expressionError("$limit + 1")?.message == "no value for the variable $limit")
    }

    @Test("date literals: CAST(seconds, \"NSDate\") is the stored form of a date")
    func dateLiterals() throws {
        let model = ObjectModel(versionName: "v", entities: [Entity(name: "Event", attributes: [Attribute(name: "at", type: .date)])])
        let compiled = try ExpressionBinder.predicate(#"at > CAST(662688000, "NSDate")"#, entity: "Event", model: model)
        #expect(compiled.predicate == .compare(.input(0), .greater, [], .constant(.integer(662_688_000))))
        #expect(expressionError(#"CAST(1, "NSURL")"#)?.message == #"expected "NSDate" or "NSNumber", found "NSURL""#)
    }

    @Test("literals are bound and identifiers quoted: text cannot change the statement")
    func noInjection() throws {
        let model = Self.bookStore.versions[1]
        let compiled = try ExpressionBinder.predicate(#"title == "x'); DROP TABLE ZBOOK; --""#, entity: "Book", model: model)
        var compiler = SQLCompiler(layout: StoreLayout(model: model))
        let fragment = compiler.sql(compiled, alias: "s")
        #expect(fragment.sql == #"(s."ZTITLE" IS ?)"#)
        #expect(fragment.arguments == [.text("x'); DROP TABLE ZBOOK; --")])
    }
}
