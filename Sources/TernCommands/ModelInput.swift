import Tern

/// Loads the model a command names (several `--model`s are merged) and says on standard error
/// what the loader accepted as Xcode does though it looks wrong, so the person sees it once.
func loadModel(_ paths: [String], forStoreAt store: String? = nil) throws -> VersionedModel {
    let model = try ModelLoader.load(paths, forStoreAt: store)
    for warning in model.warnings {
        try? CommandEnvironment.current.errors.write("tern: warning: \(warning)\n")
    }
    return model
}
