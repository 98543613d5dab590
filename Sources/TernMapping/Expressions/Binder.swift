import TernSQLite
import TernModel
import TernStore

/// Binds parsed expressions and predicates to one entity of a model: resolves key paths,
/// substitutes variables and checks kinds, with errors that name the entity and what exists.
public struct ExpressionBinder {
    /// The value `now()` stands for: the migration's start, seconds since 2001-01-01.
    public var now: Double
    /// Values for `$name` substitution variables.
    public var variables: [String: SQLiteValue]

    private let model: ObjectModel
    private let entity: String
    private let text: String
    private var inputs: [Input] = []
    /// Set while binding the elements of ANY/ALL/NONE: the side compared with the element must be
    /// a constant (Tern evaluates quantified predicates per element, without the outer object).
    private var constantOperands = false
    /// True while binding such a side: a key path there is an error.
    private var bindingConstantOperand = false

    /// The six keys Core Data defines for value expressions.
    static let migrationKeys: Set<String> = ["source", "destination", "manager", "entityMapping", "propertyMapping", "entityPolicy"]

    private init(model: ObjectModel, entity: String, text: String, variables: [String: SQLiteValue], now: Double) {
        self.model = model
        self.entity = entity
        self.text = text
        self.variables = variables
        self.now = now
    }

    /// Parses and binds a value expression evaluated for objects of `entity`.
    public static func expression(
        _ text: String, entity: String, model: ObjectModel, variables: [String: SQLiteValue] = [:], now: Double = 0
    ) throws(ExpressionError) -> CompiledExpression {
        var binder = ExpressionBinder(model: model, entity: entity, text: text, variables: variables, now: now)
        try binder.requireEntity()
        let (bound, kind) = try binder.bind(try ExpressionParser.expression(text))
        return CompiledExpression(entity: entity, expression: bound, inputs: binder.inputs, kind: kind)
    }

    /// Parses and binds a predicate evaluated for objects of `entity`.
    public static func predicate(
        _ text: String, entity: String, model: ObjectModel, variables: [String: SQLiteValue] = [:], now: Double = 0
    ) throws(ExpressionError) -> CompiledPredicate {
        var binder = ExpressionBinder(model: model, entity: entity, text: text, variables: variables, now: now)
        try binder.requireEntity()
        let bound = try binder.bind(try ExpressionParser.predicate(text))
        return CompiledPredicate(entity: entity, predicate: bound, inputs: binder.inputs)
    }

    private func requireEntity() throws(ExpressionError) {
        guard model.entity(named: entity) != nil else {
            throw ExpressionError("no entity \(entity) in model version \(model.versionName)", at: SourcePosition(offset: 0, in: text))
        }
    }

    private func error(_ message: String, at offset: Int) -> ExpressionError {
        ExpressionError(message, at: SourcePosition(offset: offset, in: text))
    }

    private mutating func input(_ input: Input) -> Int {
        if let index = inputs.firstIndex(of: input) { return index }
        inputs.append(input)
        return inputs.count - 1
    }

    // MARK: Expressions

    mutating func bind(_ syntax: ExpressionSyntax) throws(ExpressionError) -> (BoundExpression, ValueKind) {
        switch syntax {
        case .literal(let value, _, _):
            return (.constant(value), Self.kind(of: value))
        case .variable(let name, let at):
            if Self.migrationKeys.contains(name) {
                throw error("$\(name) is not a value: use a key path such as $source.name, or FUNCTION($manager, …) in a relationship mapping", at: at)
            }
            guard let value = variables[name] else {
                throw error("no value for the variable $\(name)", at: at)
            }
            return (.constant(value), Self.kind(of: value))
        case .keyPath(let base, let components, let at):
            return try bindKeyPath(base: base, components: components, at: at)
        case .binary(let op, let lhs, let rhs, let at):
            let (left, leftKind) = try bind(lhs)
            let (right, rightKind) = try bind(rhs)
            for (kind, side) in [(leftKind, lhs), (rightKind, rhs)] where kind != .number && kind != .null {
                throw error("\(op.rawValue) needs numbers, but this is \(Self.describe(kind))", at: side.offset)
            }
            _ = at
            return (.binary(op, left, right), .number)
        case .negate(let operand, _):
            let (bound, kind) = try bind(operand)
            guard kind == .number || kind == .null else {
                throw error("- needs a number, but this is \(Self.describe(kind))", at: operand.offset)
            }
            return (.negate(bound), .number)
        case .function(let name, let arguments, let at):
            return try bindFunction(name, arguments, at: at)
        case .managerFunction(_, let selector, _, let at):
            throw error("FUNCTION($manager, \"\(selector)\", …) gives destination objects: it belongs in a relationship mapping, not in a value", at: at)
        case .list(_, let at):
            throw error("a list {…} is only allowed after IN or BETWEEN", at: at)
        }
    }

    private mutating func bindFunction(_ name: String, _ arguments: [ExpressionSyntax], at: Int) throws(ExpressionError) -> (BoundExpression, ValueKind) {
        guard let function = BuiltinFunction(rawValue: name) else {
            throw error("unknown function \(name) (known: \(BuiltinFunction.names))", at: at)
        }
        if let arity = function.arity, arguments.count != arity {
            throw error("\(name) takes \(arity) argument\(arity == 1 ? "" : "s"), not \(arguments.count)", at: at)
        }
        if function.arity == nil, arguments.isEmpty {
            throw error("\(name) takes at least one argument", at: at)
        }
        if function == .now { return (.constant(.real(now)), .number) }
        if function == .ifNil {
            let (value, valueKind) = try bind(arguments[0])
            let (fallback, fallbackKind) = try bind(arguments[1])
            guard valueKind == fallbackKind || valueKind == .null || fallbackKind == .null else {
                throw error(
                    "ifNil: needs a fallback of the same kind: \(Self.describe(valueKind)), not \(Self.describe(fallbackKind))", at: arguments[1].offset)
            }
            return (.function(.ifNil, [value, fallback]), valueKind == .null ? fallbackKind : valueKind)
        }
        var bound: [BoundExpression] = []
        let expected = function.signature.arguments
        for (index, argument) in arguments.enumerated() {
            let (value, kind) = try bind(argument)
            let wanted = expected[min(index, expected.count - 1)]
            guard kind == wanted || kind == .null else {
                throw error("argument \(index + 1) of \(name) must be \(Self.describe(wanted)), not \(Self.describe(kind))", at: argument.offset)
            }
            bound.append(value)
        }
        switch function {
        case .add: return (.binary(.add, bound[0], bound[1]), .number)
        case .subtract: return (.binary(.subtract, bound[0], bound[1]), .number)
        case .multiply: return (.binary(.multiply, bound[0], bound[1]), .number)
        case .divide: return (.binary(.divide, bound[0], bound[1]), .number)
        default: return (.function(function, bound), function.signature.result)
        }
    }

    private mutating func bindKeyPath(base: ExpressionSyntax?, components: [String], at: Int) throws(ExpressionError) -> (BoundExpression, ValueKind) {
        if bindingConstantOperand {
            throw error("inside ANY/ALL/NONE the value compared with the elements must be a constant", at: at)
        }
        if let base {
            guard case .variable(let name, let variableAt) = base else {
                throw error("a key path must start at an object ($source, or a key of the object)", at: at)
            }
            guard name == "source" else {
                if Self.migrationKeys.contains(name) {
                    throw error("$\(name).… cannot be read: value expressions read $source key paths", at: variableAt)
                }
                throw error("$\(name) is a substitution variable, not an object with keys", at: variableAt)
            }
        }
        guard !components.isEmpty else {
            throw error("a key path needs at least one key after the object", at: at)
        }
        var current = entity
        var relationships: [String] = []
        for (index, component) in components.enumerated() {
            let isLast = index == components.count - 1
            if let attribute = model.allAttributes(of: current).first(where: { $0.name == component }) {
                guard isLast else {
                    throw error("\(current).\(component) is an attribute: it has no key \(components[index + 1])", at: at)
                }
                guard !attribute.isTransient else {
                    throw error("\(current).\(component) is transient: it is not stored, so it cannot be read", at: at)
                }
                let slot = input(Input(entity: entity, relationships: relationships, final: .attribute(component)))
                return (.input(slot), Self.kind(of: attribute.type))
            }
            if let relationship = model.allRelationships(of: current).first(where: { $0.name == component }) {
                if relationship.isToMany {
                    if index + 1 == components.count - 1, components[index + 1] == "@count" {
                        let slot = input(Input(entity: entity, relationships: relationships, final: .count(component)))
                        return (.input(slot), .number)
                    }
                    throw error("\(current).\(component) is a to-many relationship: use \(component).@count, or ANY/ALL/NONE in a predicate", at: at)
                }
                if isLast {
                    let slot = input(Input(entity: entity, relationships: relationships + [component], final: .objectKey))
                    return (.input(slot), .object)
                }
                relationships.append(component)
                current = relationship.destination
                continue
            }
            let available = (model.allAttributes(of: current).map(\.name) + model.allRelationships(of: current).map(\.name)).sorted()
            throw error("entity \(current) has no property \(component) (it has: \(available.joined(separator: ", ")))", at: at)
        }
        throw error("a key path needs at least one key after the object", at: at)
    }

    // MARK: Predicates

    mutating func bind(_ syntax: PredicateSyntax) throws(ExpressionError) -> BoundPredicate {
        switch syntax {
        case .constant(let value):
            return .constant(value)
        case .not(let inner):
            return .not(try bind(inner))
        case .and(let lhs, let rhs):
            return .and(try bind(lhs), try bind(rhs))
        case .or(let lhs, let rhs):
            return .or(try bind(lhs), try bind(rhs))
        case .comparison(let lhs, let op, let options, let rhs, let quantifier, let at):
            if let split = try toManySplit(lhs, quantifier: quantifier, at: at) {
                return try bindQuantified(split, quantifier: quantifier ?? .anyElement) {
                    (binder: inout ExpressionBinder, element: ExpressionSyntax) throws(ExpressionError) in
                    try binder.bindComparison(element, op, options, rhs, at: at)
                }
            }
            return try bindComparison(lhs, op, options, rhs, at: at)
        case .between(let value, let low, let high, let quantifier, let at):
            if let split = try toManySplit(value, quantifier: quantifier, at: at) {
                return try bindQuantified(split, quantifier: quantifier ?? .anyElement) {
                    (binder: inout ExpressionBinder, element: ExpressionSyntax) throws(ExpressionError) in
                    try binder.bindBetween(element, low, high)
                }
            }
            return try bindBetween(value, low, high)
        case .isIn(let value, let items, let quantifier, let at):
            if let split = try toManySplit(value, quantifier: quantifier, at: at) {
                return try bindQuantified(split, quantifier: quantifier ?? .anyElement) {
                    (binder: inout ExpressionBinder, element: ExpressionSyntax) throws(ExpressionError) in
                    try binder.bindIn(element, items)
                }
            }
            return try bindIn(value, items)
        }
    }

    private mutating func bindComparison(_ lhs: ExpressionSyntax, _ op: ComparisonOperator, _ options: ComparisonOptions, _ rhs: ExpressionSyntax, at: Int)
        throws(ExpressionError) -> BoundPredicate
    {
        let (left, leftKind) = try bind(lhs)
        let (right, rightKind) = try bindOperand(rhs)
        switch op {
        case .equal, .notEqual:
            guard leftKind == rightKind || leftKind == .null || rightKind == .null else {
                throw error("cannot compare \(Self.describe(leftKind)) with \(Self.describe(rightKind))", at: at)
            }
            if !options.isEmpty, [leftKind, rightKind].contains(where: { $0 != .text && $0 != .null }) {
                throw error("[c] and [d] apply to strings only", at: at)
            }
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            for kind in [leftKind, rightKind] where kind == .object || kind == .blob {
                throw error("\(op.rawValue) cannot order \(Self.describe(kind))", at: at)
            }
            guard leftKind == rightKind || leftKind == .null || rightKind == .null else {
                throw error("cannot compare \(Self.describe(leftKind)) with \(Self.describe(rightKind))", at: at)
            }
        case .beginsWith, .endsWith, .contains, .like, .matches:
            for (kind, side) in [(leftKind, lhs), (rightKind, rhs)] where kind != .text && kind != .null {
                throw error("\(op.rawValue) needs strings, but this is \(Self.describe(kind))", at: side.offset)
            }
            // A constant pattern is compiled now, by the engine that runs it: a bad one is a
            // mistake in the mapping, named where it is, not an SQL error mid-migration.
            if op == .matches, case .constant(.text(let pattern)) = right, let problem = TextFunctions.patternProblem(pattern, options: options) {
                throw error(problem, at: rhs.offset)
            }
        }
        return .compare(left, op, options, right)
    }

    private mutating func bindBetween(_ value: ExpressionSyntax, _ low: ExpressionSyntax, _ high: ExpressionSyntax) throws(ExpressionError) -> BoundPredicate {
        let (bound, kind) = try bind(value)
        let (lower, lowKind) = try bindOperand(low)
        let (upper, highKind) = try bindOperand(high)
        for (other, side) in [(lowKind, low), (highKind, high)] where other != kind && other != .null && kind != .null {
            throw error("BETWEEN bounds must be \(Self.describe(kind)), not \(Self.describe(other))", at: side.offset)
        }
        guard kind == .number || kind == .text || kind == .null else {
            throw error("BETWEEN cannot order \(Self.describe(kind))", at: value.offset)
        }
        return .between(bound, lower, upper)
    }

    private mutating func bindIn(_ value: ExpressionSyntax, _ items: [ExpressionSyntax]) throws(ExpressionError) -> BoundPredicate {
        let (bound, kind) = try bind(value)
        var list: [BoundExpression] = []
        for item in items {
            let (boundItem, itemKind) = try bindOperand(item)
            guard itemKind == kind || itemKind == .null || kind == .null else {
                throw error("IN list items must be \(Self.describe(kind)), not \(Self.describe(itemKind))", at: item.offset)
            }
            list.append(boundItem)
        }
        return .isIn(bound, list)
    }

    /// Binds the side a value is compared with; inside ANY/ALL/NONE it must read nothing.
    private mutating func bindOperand(_ syntax: ExpressionSyntax) throws(ExpressionError) -> (BoundExpression, ValueKind) {
        bindingConstantOperand = constantOperands
        defer { bindingConstantOperand = false }
        return try bind(syntax)
    }

    /// For `rel.key …` where `rel` is a to-many relationship of the object: the relationship and
    /// the key path inside its elements. Nil for paths without a to-many relationship.
    private func toManySplit(_ lhs: ExpressionSyntax, quantifier: Quantifier?, at: Int) throws(ExpressionError) -> (
        relationship: Relationship, element: ExpressionSyntax
    )? {
        guard case .keyPath(let base, let components, let pathAt) = lhs, let first = components.first,
            let relationship = model.allRelationships(of: entity).first(where: { $0.name == first }), relationship.isToMany,
            components.count >= 2, components[1] != "@count"
        else {
            if quantifier != nil {
                throw error("\(quantifier!.rawValue) needs a key path through a to-many relationship of \(entity), such as pages.text", at: at)
            }
            return nil
        }
        _ = base
        return (relationship, .keyPath(base: nil, components: Array(components.dropFirst()), at: pathAt))
    }

    private mutating func bindQuantified(
        _ split: (relationship: Relationship, element: ExpressionSyntax), quantifier: Quantifier,
        _ bindElement: (inout ExpressionBinder, ExpressionSyntax) throws(ExpressionError) -> BoundPredicate
    ) throws(ExpressionError) -> BoundPredicate {
        var inner = ExpressionBinder(model: model, entity: split.relationship.destination, text: text, variables: variables, now: now)
        inner.constantOperands = true
        let predicate = try bindElement(&inner, split.element)
        _ = input(Input(entity: entity, relationships: [], final: .ownKey))
        return .quantified(
            quantifier, relationship: split.relationship.name, elementEntity: split.relationship.destination,
            predicate: predicate, elementInputs: inner.inputs)
    }

    // MARK: Kinds

    static func kind(of value: SQLiteValue) -> ValueKind {
        switch value {
        case .null: .null
        case .integer, .real: .number
        case .text: .text
        case .blob: .blob
        }
    }

    static func kind(of type: AttributeType) -> ValueKind {
        switch type.storageClass {
        case .integer, .real: .number
        case .text: .text
        case .blob, .null: .blob
        }
    }

    static func describe(_ kind: ValueKind) -> String {
        switch kind {
        case .number: "a number"
        case .text: "a string"
        case .blob: "binary data"
        case .object: "an object (a to-one relationship)"
        case .null: "nil"
        }
    }
}
