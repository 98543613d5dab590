import Foundation
import TernModel

/// How a migration chooses the versions it passes through on its way to the target.
public enum RouteChoice: Sendable, Equatable, Codable {
    /// Core Data's: the app's mapping model from the store's version to the target if it ships
    /// one; else its mapping models where they lie on the way (by content, `VersionFacts`), one
    /// inferred mapping for each stretch none covers; with none on the way, one mapping inferred
    /// from the store's version to the target, as Core Data's automatic migration does.
    case coreData
    /// Staged, as `NSStagedMigrationManager` runs: through every version that lies between, each
    /// hop by the app's mapping model for it or inferred, so each version's own rules apply.
    case stepByStep
    /// Through the named versions in this order, each leg chosen as `.coreData` chooses.
    case through([String])
}

/// The hops a migration takes from version to version, each by an app's mapping model or
/// inferred, and why (for `tern plan` and the report).
struct VersionRoute: Equatable {
    struct Hop: Equatable {
        var from: String
        var to: String
        var byMapping: Bool
    }

    var hops: [Hop]
    /// Why this route, in words.
    var reason: String
}

/// Chooses routes among a model's versions (no order of names anywhere; see `VersionFacts`).
struct VersionRouter {
    private let versions: [String: ObjectModel]
    /// The pairs the app ships mapping models for.
    private let mapped: Set<StepIdentity>
    private var facts: [String: VersionFacts] = [:]

    init(versions: [ObjectModel], mapped: Set<StepIdentity>) {
        self.versions = Dictionary(versions.map { ($0.versionName, $0) }, uniquingKeysWith: { first, _ in first })
        self.mapped = mapped
    }

    /// The content distance between two versions, each version's facts computed once.
    private mutating func distance(_ a: String, _ b: String) -> Int {
        guard a != b else { return 0 }
        return facts(of: a).distance(to: facts(of: b))
    }

    private mutating func facts(of name: String) -> VersionFacts {
        if let known = facts[name] { return known }
        let computed = VersionFacts(versions[name]!)
        facts[name] = computed
        return computed
    }

    /// The route from `from` to `to` as `choice` says, with no inferred hop over a pair in
    /// `refused` (pairs whose inference failed); nil when none is left.
    mutating func route(from: String, to: String, choice: RouteChoice, refused: Set<StepIdentity> = []) -> VersionRoute? {
        switch choice {
        case .coreData:
            return coreDataRoute(from: from, to: to, refused: refused)
        case .stepByStep:
            guard let route = coreDataRoute(from: from, to: to, refused: refused) else { return nil }
            var hops: [VersionRoute.Hop] = []
            for hop in route.hops { hops += hop.byMapping ? [hop] : staged(from: hop.from, to: hop.to) }
            return VersionRoute(
                hops: hops,
                reason: "step by step (--step-by-step): every version that lies between, by content, each hop by the app's mapping model or inferred")
        case .through(let stops):
            var hops: [VersionRoute.Hop] = []
            for (start, end) in zip([from] + stops, stops + [to]) where start != end {
                guard let leg = coreDataRoute(from: start, to: end, refused: refused) else { return nil }
                hops += leg.hops
            }
            return VersionRoute(hops: hops, reason: "through \(stops.joined(separator: ", ")) as asked (--through), each leg by Core Data's rule")
        }
    }

    /// Core Data's route: the direct mapping model, else the cheapest route through the app's
    /// mapping models, where cost is what is left to inference (the content distance its
    /// inferred hops cover), then fewer hops, then fewer inferred ones. A mapping model that
    /// does not lie on the way costs a detour and is not taken; with none, the route is one
    /// inferred hop, as Core Data's automatic migration takes.
    private mutating func coreDataRoute(from: String, to: String, refused: Set<StepIdentity>) -> VersionRoute? {
        if mapped.contains(StepIdentity(source: from, destination: to)) {
            return VersionRoute(hops: [.init(from: from, to: to, byMapping: true)], reason: "the app's mapping model from \(from) to \(to)")
        }
        // Two inferred hops in a row are never better than one (the triangle inequality): the
        // only places a route turns are the ends of mapping models.
        var nodes = [from, to]
        for pair in mapped.sorted(by: { ($0.source, $0.destination) < ($1.source, $1.destination) }) {
            for name in [pair.source, pair.destination] where !nodes.contains(name) && versions[name] != nil { nodes.append(name) }
        }
        typealias Weight = (cost: Int, hops: Int, inferred: Int)
        func less(_ a: Weight, _ b: Weight) -> Bool { (a.cost, a.hops, a.inferred) < (b.cost, b.hops, b.inferred) }
        var best: [String: Weight] = [from: (0, 0, 0)]
        var previous: [String: VersionRoute.Hop] = [:]
        var done: Set<String> = []
        while let current = nodes.filter({ !done.contains($0) && best[$0] != nil }).min(by: { less(best[$0]!, best[$1]!) }) {
            done.insert(current)
            if current == to { break }
            let here = best[current]!
            for next in nodes where next != current && !done.contains(next) {
                let pair = StepIdentity(source: current, destination: next)
                let weight: Weight
                if mapped.contains(pair) {
                    weight = (here.cost, here.hops + 1, here.inferred)
                } else if !refused.contains(pair), !facts(of: current).drops(goingTo: facts(of: next), keptBy: facts(of: from), and: facts(of: to)) {
                    // Never an inferred hop that loses what both ends keep (back to a version
                    // before a property was added, to reach an older mapping model).
                    weight = (here.cost + distance(current, next), here.hops + 1, here.inferred + 1)
                } else {
                    continue
                }
                if best[next].map({ less(weight, $0) }) ?? true {
                    best[next] = weight
                    previous[next] = VersionRoute.Hop(from: current, to: next, byMapping: mapped.contains(pair))
                }
            }
        }
        guard best[to] != nil else { return nil }
        var hops: [VersionRoute.Hop] = []
        var position = to
        while position != from, let hop = previous[position] {
            hops.insert(hop, at: 0)
            position = hop.from
        }
        let taken = Set(hops.filter(\.byMapping).map { StepIdentity(source: $0.from, destination: $0.to) })
        let reason: String
        if taken.isEmpty {
            reason =
                mapped.isEmpty
                ? "Core Data's: no mapping model from \(from) to \(to), one mapping inferred from \(from) to \(to)"
                : "Core Data's: no mapping model from \(from) to \(to) and none of the app's lies on the way, one mapping inferred from \(from) to \(to)"
        } else {
            reason = "the app's mapping models that lie on the way from \(from) to \(to) (by content), one inferred mapping for each stretch they leave"
        }
        let unused = mapped.subtracting(taken).sorted { ($0.source, $0.destination) < ($1.source, $1.destination) }
        let note = unused.isEmpty ? "" : "; not on the way: " + unused.map { "\($0.source) → \($0.destination)" }.joined(separator: ", ")
        return VersionRoute(hops: hops, reason: reason + note)
    }

    /// The versions between `from` and `to` by content, nearest `from` first.
    mutating func intermediates(from: String, to: String) -> [String] {
        staged(from: from, to: to).dropLast().map(\.to)
    }

    /// Every version between `from` and `to` by content (`VersionFacts.lies(between:and:)`),
    /// nearest first: each hop goes to the nearest version that lies between where it is and
    /// `to` and is nearer `to`.
    private mutating func staged(from: String, to: String) -> [VersionRoute.Hop] {
        var hops: [VersionRoute.Hop] = []
        var current = from
        let names = versions.keys.sorted()
        let target = facts(of: to)
        while current != to {
            let remaining = distance(current, to)
            let here = facts(of: current)
            var next = to
            var nearest = Int.max
            for name in names where name != current && name != to {
                let step = distance(current, name)
                guard step > 0, step < nearest, distance(name, to) < remaining, facts(of: name).lies(between: here, and: target) else { continue }
                (next, nearest) = (name, step)
            }
            hops.append(.init(from: current, to: next, byMapping: mapped.contains(StepIdentity(source: current, destination: next))))
            current = next
        }
        return hops
    }
}

extension RouteChoice {
    /// The route a command's flags ask for: `--through` (comma-separated versions), else
    /// `--step-by-step`, else Core Data's.
    public init(stepByStep: Bool, through: String?) {
        if let through {
            self = .through(through.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        } else {
            self = stepByStep ? .stepByStep : .coreData
        }
    }
}
