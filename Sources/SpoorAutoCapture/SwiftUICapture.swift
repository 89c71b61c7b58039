// Apple-only glue: not compiled on Linux, and not compiled by the author. The rules are CaptureModel's.
#if canImport(SwiftUI)
public import SwiftUI

extension EnvironmentValues {
    /// The ``AutoCapture`` SwiftUI pages and buttons report to; set it once at the root view.
    public var spoorAutoCapture: AutoCapture? {
        get { self[AutoCaptureKey.self] }
        set { self[AutoCaptureKey.self] = newValue }
    }

    /// The page the view is on, set by `spoorPage(_:title:url:)`.
    var spoorPage: PageNode? {
        get { self[PageKey.self] }
        set { self[PageKey.self] = newValue }
    }
}

private struct AutoCaptureKey: EnvironmentKey {
    static let defaultValue: AutoCapture? = nil
}

private struct PageKey: EnvironmentKey {
    static let defaultValue: PageNode? = nil
}

extension View {
    /// Reports this view as a page: `$AppViewScreen` when it appears, `$AppPageLeave` when it goes.
    public func spoorPage(_ screenName: String, title: String? = nil, url: String? = nil) -> some View {
        modifier(SpoorPageModifier(page: PageNode(
            typeName: screenName, custom: CustomPage(screenName: screenName, title: title, url: url))))
    }
}

struct SpoorPageModifier: ViewModifier {
    let page: PageNode
    @Environment(\.spoorAutoCapture) private var capture
    /// One id per appearance of this view in the hierarchy.
    @State private var id = UUID().uuidString

    func body(content: Content) -> some View {
        content
            .environment(\.spoorPage, page)
            .onAppear { capture?.pageAppeared(page, id: id) }
            .onDisappear { capture?.pageDisappeared(id: id) }
    }
}

/// A `Button` that reports `$AppClick` (type `SpoorButton`, content `title`, id `id`) before its action.
public struct SpoorButton: View {
    private let title: String
    private let id: String?
    private let action: () -> Void
    @Environment(\.spoorAutoCapture) private var capture
    @Environment(\.spoorPage) private var page

    /// Creates a button with a text label.
    public init(_ title: String, id: String? = nil, action: @escaping () -> Void) {
        self.title = title
        self.id = id
        self.action = action
    }

    public var body: some View {
        Button(title) {
            let parent = ViewNode(typeName: page?.typeName ?? "SwiftUIView", page: page)
            capture?.clicked(ViewNode(typeName: "SpoorButton", accessibilityIdentifier: id, text: title, parent: parent))
            action()
        }
        .accessibilityIdentifier(id ?? "")
    }
}
#endif
