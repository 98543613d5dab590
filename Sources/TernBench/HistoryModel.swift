import TernCommands
import Foundation

/// A generated Xcode model with a long history (`tern bench --history-versions`): version `k`
/// of `Long` has `Person` with `k - 1` added Integer 32 attributes (each with a default), a
/// transient attribute of Xcode's "Undefined" type, a reflexive many-to-many and a one-to-many to
/// `Pet`. What an app with years of releases ships: the cost of a small store's migration must
/// be the store's, not the history's.
enum HistoryModel {
    /// Writes `Long.xcdatamodeld` with `versions` versions into `directory`; returns its path.
    static func write(versions: Int, into directory: String) throws -> String {
        let bundle = URL(fileURLWithPath: directory).appendingPathComponent("Long.xcdatamodeld")
        try? FileManager.default.removeItem(at: bundle)
        for version in 1...versions {
            let folder = bundle.appendingPathComponent("Long \(version).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let added = (1..<version).map {
                #"        <attribute name="added\#($0)" attributeType="Integer 32" defaultValueString="\#($0)" usesScalarValueType="YES"/>"#
            }
            let contents =
                [
                    #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#,
                    #"<model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">"#,
                    #"    <entity name="Person" representedClassName="Person" syncable="YES">"#,
                ] + added + [
                    #"        <attribute name="born" optional="YES" attributeType="Date" usesScalarValueType="NO"/>"#,
                    #"        <attribute name="name" optional="YES" attributeType="String"/>"#,
                    #"        <attribute name="scratch" optional="YES" transient="YES"/>"#,
                    #"        <relationship name="friendOf" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Person" inverseName="friends" inverseEntity="Person"/>"#,
                    #"        <relationship name="friends" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Person" inverseName="friendOf" inverseEntity="Person"/>"#,
                    #"        <relationship name="pets" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Pet" inverseName="owner" inverseEntity="Pet"/>"#,
                    #"    </entity>"#,
                    #"    <entity name="Pet" representedClassName="Pet" syncable="YES">"#,
                    #"        <attribute name="name" optional="YES" attributeType="String"/>"#,
                    #"        <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="pets" inverseEntity="Person"/>"#,
                    #"    </entity>"#,
                    #"</model>"#,
                ]
            try Data((contents.joined(separator: "\n") + "\n").utf8).write(to: folder.appendingPathComponent("contents"))
        }
        let current = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
                <key>_XCCurrentVersionName</key>
                <string>Long \(versions).xcdatamodel</string>
            </dict>
            </plist>

            """
        try Data(current.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        return bundle.path
    }
}
