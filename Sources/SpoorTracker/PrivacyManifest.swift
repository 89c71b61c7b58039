package import Foundation

/// The privacy manifest (`PrivacyInfo.xcprivacy`) Spoor ships as a resource of this module, so that every
/// app linking Spoor carries it.
package enum PrivacyManifest {
    /// Where the built module's copy is.
    package static var url: URL? { Bundle.module.url(forResource: "PrivacyInfo", withExtension: "xcprivacy") }
}
