import SpoorAutoCapture
import SpoorModel
import Testing

/// The options apps set on views (`spoorIgnored`, `spoorElementID`, `spoorProperties`), kept beside each
/// object and gone with it.
@Suite("view options")
struct ViewOptionsTests {
    final class View: SpoorViewOptions {}

    @Test func optionsAreKeptPerObject() {
        let a = View(), b = View()
        #expect(!a.spoorIgnored && a.spoorElementID == nil && a.spoorProperties.isEmpty)
        a.spoorIgnored = true
        a.spoorElementID = "checkout"
        a.spoorProperties = ["step": 2]
        #expect(a.spoorIgnored && a.spoorElementID == "checkout" && a.spoorProperties == ["step": 2])
        #expect(!b.spoorIgnored && b.spoorElementID == nil && b.spoorProperties.isEmpty)
        a.spoorIgnored = false
        #expect(!a.spoorIgnored && a.spoorElementID == "checkout")
    }

    @Test func aFreedObjectsOptionsAreNotInherited() {
        // Many objects come and go, each with options; new ones (often at a freed one's address) start clean.
        for index in 0..<500 {
            let view = View()
            #expect(!view.spoorIgnored && view.spoorElementID == nil)
            view.spoorIgnored = true
            view.spoorElementID = "v\(index)"
        }
        let kept = View()
        kept.spoorElementID = "kept"
        for _ in 0..<500 { View().spoorIgnored = true }
        #expect(kept.spoorElementID == "kept")
    }
}
