import Foundation

/// The privacy manifest (`PrivacyInfo.xcprivacy`) Spoor ships as a resource of this module, so that every
/// app linking Spoor carries it.
enum PrivacyManifest {
    /// Where the built module's copy is.
    static var url: URL? { Bundle.module.url(forResource: "PrivacyInfo", withExtension: "xcprivacy") }
}
