// SwiftUI glue, built only with an Apple SDK (docs/verifying-on-apple.md). The rules are CaptureRules'.
#if canImport(SwiftUI)
public import Foundation
public import SpoorModel
public import SwiftUI

extension EnvironmentValues {
    /// The ``AutoCapture`` SwiftUI pages and controls report to: set it once on the root view.
    @Entry public var spoorAutoCapture: AutoCapture? = nil
    /// The page around a view, from the nearest `spoorPage(_:title:url:properties:)`.
    @Entry var spoorPage: PageNode? = nil
}

extension View {
    /// Reports this view as a page named `screenName`: `$AppViewScreen` when it appears, `$AppPageLeave`
    /// when it disappears; controls inside it name it in their clicks.
    public func spoorPage(_ screenName: String, title: String? = nil, url: String? = nil, properties: Properties = [:]) -> some View {
        modifier(PageModifier(page: CaptureRules.swiftUIPage(screenName: screenName, title: title, url: url, properties: properties)))
    }

    /// Reports taps on this view as `$AppClick`: put it on a `Button`, `Toggle` (`.toggle(wasOn:)` with the
    /// value shown), `NavigationLink` or a view with `onTapGesture`. `title`, resolved in the app's current
    /// language, is `$element_content`. The view's own action still runs, as before; a disabled control gives
    /// no click. This is the only way SwiftUI content is captured: the UIKit hooks leave out what SwiftUI
    /// draws (the switch under a `Toggle`, a `List`'s rows), so each tap counts once.
    public func spoorClick(_ title: LocalizedStringResource, control: SpoorControl = .button, id: String? = nil, properties: Properties = [:]) -> some View {
        modifier(ClickModifier(title: String(localized: title), control: control, id: id, properties: properties))
    }
}

private final class PageIdentity {}

private struct PageModifier: ViewModifier {
    let page: PageNode
    @Environment(\.spoorAutoCapture) private var capture
    /// The page's identity while this view is in the hierarchy: held weakly by the capture.
    @State private var identity = PageIdentity()

    func body(content: Content) -> some View {
        content.environment(\.spoorPage, page)
            .onAppear { if let capture { capture.pageAppeared(page, object: identity) } else { AutoCapture.warnMissingEnvironment() } }
            .onDisappear { capture?.pageDisappeared(object: identity) }
    }
}

private struct ClickModifier: ViewModifier {
    let title: String, control: SpoorControl, id: String?, properties: Properties
    @Environment(\.spoorAutoCapture) private var capture
    @Environment(\.spoorPage) private var page
    @Environment(\.isEnabled) private var isEnabled

    func body(content: Content) -> some View {
        content.simultaneousGesture(TapGesture().onEnded {  // simultaneous: the view's own handling is untouched
            let click = CaptureRules.swiftUIClick(control, title: title, id: id, properties: properties, page: page, isEnabled: isEnabled)
            if let click { capture?.clicked(click) }
        })
        .onAppear { if capture == nil { AutoCapture.warnMissingEnvironment() } }
    }
}
#endif
