import Tern

/// Loads the model a command names (several `--model`s are merged). What the loader accepted as
/// Xcode does though it looks wrong is said by `warn(about:versions:)`, once the command knows
/// which versions it uses.
func loadModel(_ paths: [String], forStoreAt store: String? = nil) throws -> VersionedModel {
    try ModelLoader.load(paths, forStoreAt: store)
}

/// Says on standard error each distinct quirk of the versions a command used (every version when
/// nil), once: a quirk a long history copies into every version is one line.
func warn(about model: VersionedModel, versions: Set<String>?) {
    for warning in model.warnings(for: versions) {
        try? CommandEnvironment.current.errors.write("tern: warning: \(warning)\n")
    }
}
