public import SpoorModel

/// Realistic event streams for benchmarks and tests, deterministic by seed: a phone app session
/// (app start, page views with referrers, clicks with element paths, page leaves with durations,
/// purchases, timers, a login) and a Linux service's request events.
///
/// ``nextCall()`` gives what an app passes to `Tracker.track` (name and call-site properties);
/// ``nextEvent()`` gives the whole event as the tracker records it: presets, super properties and
/// call-site properties merged, ids, sequence, session and time filled in.
public struct Workload: Sendable {
    /// Which stream.
    public enum Kind: String, Sendable, CaseIterable {
        /// A shopping app on an iPhone.
        case iPhoneApp
        /// An HTTP service on Linux.
        case linuxService
    }

    /// What an app passes to `track`.
    public struct Call: Sendable {
        /// The event name.
        public var name: String
        /// The call-site properties.
        public var properties: Properties
        /// Recorded by auto-tracking rather than by the app's code.
        public var isAutoTrack: Bool
        /// Milliseconds since the previous call.
        public var delay: Int64

        /// Creates a call.
        public init(name: String, properties: Properties, isAutoTrack: Bool = false, delay: Int64 = 0) {
            self.name = name
            self.properties = properties
            self.isAutoTrack = isAutoTrack
            self.delay = delay
        }
    }

    /// Which stream this is.
    public let kind: Kind
    /// The preset properties of the device.
    public let presets: Properties
    /// The super properties registered now; they change when the user logs in.
    public private(set) var superProperties: Properties
    private var random: SplitMix64
    private var time: Int64
    private var sequence: UInt64 = 0
    private let anonymousID: String
    private var loginID: String?
    private var sessionID: String
    private var pending: [Call] = []
    private var page: Page?
    private var pageShownAt: Int64 = 0
    private var cart: [Product] = []
    private var started = false

    /// Creates a stream; equal seeds give equal streams.
    public init(_ kind: Kind, seed: UInt64, startTime: Int64 = 1_763_769_600_123) {
        self.kind = kind
        random = SplitMix64(seed: seed)
        time = startTime
        switch kind {
        case .iPhoneApp:
            presets = WorkloadPresets.iPhone
            superProperties = [:]
        case .linuxService:
            presets = WorkloadPresets.linuxServer
            superProperties = WorkloadPresets.linuxServerSuper
        }
        anonymousID = Self.uuid(&random)
        sessionID = Self.uuid(&random)
    }

    /// The next call the app makes.
    public mutating func nextCall() -> Call {
        if pending.isEmpty {
            switch kind {
            case .iPhoneApp: planAppStep()
            case .linuxService: planRequest()
            }
        }
        let call = pending.removeFirst()
        time += call.delay
        return call
    }

    /// The next event, whole, as the tracker records it.
    public mutating func nextEvent() -> Event {
        let call = nextCall()
        sequence += 1
        var properties = presets
        for (key, value) in superProperties { properties[key] = value }
        for (key, value) in call.properties { properties[key] = value }
        let lib = LibInfo(
            lib: kind == .iPhoneApp ? "iOS" : "Linux", libVersion: Self.text(presets["$lib_version"]) ?? "",
            method: call.isAutoTrack ? .autoTrack : .code, appVersion: Self.text(presets["$app_version"]) ?? "")
        let distinct = kind == .linuxService ? (Self.text(call.properties["account_id"]) ?? anonymousID) : (loginID ?? anonymousID)
        return Event(
            name: call.name, time: time, trackID: random.next(), sequence: sequence,
            distinctID: distinct, anonymousID: anonymousID, loginID: kind == .iPhoneApp ? loginID : nil,
            lib: lib, properties: properties, sessionID: kind == .iPhoneApp ? sessionID : nil)
    }

    /// The next `count` events.
    public mutating func events(_ count: Int) -> [Event] {
        (0..<count).map { _ in nextEvent() }
    }

    // MARK: - The app

    private struct Page {
        var screen: String
        var title: String
        var url: String
    }

    private struct Product {
        var id: String
        var name: String
        var price: Double
    }

    private static let products: [Product] = [
        Product(id: "sku-10231", name: "Sencha Green Tea 100 g", price: 8.9),
        Product(id: "sku-10232", name: "Darjeeling First Flush 50 g", price: 14.5),
        Product(id: "sku-10407", name: "Milk Oolong 100 g", price: 11.0),
        Product(id: "sku-10588", name: "Ceremonial Matcha 30 g", price: 24.9),
        Product(id: "sku-10611", name: "Rooibos Vanilla 200 g", price: 6.75),
        Product(id: "sku-10802", name: "Yerba Mate 500 g", price: 9.99),
        Product(id: "sku-11020", name: "Glass Teapot 600 ml", price: 29.0),
    ]

    private static let categories = ["green", "black", "oolong", "matcha", "herbal", "accessories"]

    private mutating func pick<T>(_ items: [T]) -> T {
        items[Int(random.next() % UInt64(items.count))]
    }

    private mutating func between(_ low: Int64, _ high: Int64) -> Int64 {
        low + Int64(random.next() % UInt64(high - low + 1))
    }

    private mutating func show(_ next: Page) {
        if let current = page {
            let duration = Double(time - pageShownAt + between(0, 50)) / 1000
            pending.append(Call(name: "$AppPageLeave", properties: [
                "$screen_name": .string(current.screen), "$title": .string(current.title), "$url": .string(current.url),
                "$event_duration": .double((duration * 1000).rounded() / 1000),
            ], isAutoTrack: true, delay: between(300, 25_000)))
        }
        var properties: Properties = ["$screen_name": .string(next.screen), "$title": .string(next.title), "$url": .string(next.url)]
        if let current = page {
            properties["$referrer"] = .string(current.url)
            properties["$referrer_title"] = .string(current.title)
        }
        pending.append(Call(name: "$AppViewScreen", properties: properties, isAutoTrack: true, delay: between(20, 120)))
        page = next
        pageShownAt = time
    }

    private mutating func click(_ content: String, type: String, path: String, position: String) {
        guard let current = page else { return }
        pending.append(Call(name: "$AppClick", properties: [
            "$screen_name": .string(current.screen), "$title": .string(current.title),
            "$element_type": .string(type), "$element_content": .string(content),
            "$element_path": .string(path), "$element_position": .string(position),
        ], isAutoTrack: true, delay: between(800, 12_000)))
    }

    private mutating func planAppStep() {
        if !started {
            started = true
            pending.append(Call(name: "$AppStart", properties: ["$is_first_time": false, "$resume_from_background": false],
                                isAutoTrack: true, delay: 0))
            show(Page(screen: "Leafline.HomeViewController", title: "Home", url: "leafline://home"))
            return
        }
        let roll = random.next() % 100
        switch roll {
        case 0..<30:
            let category = pick(Self.categories)
            click(category.capitalized, type: "UICollectionViewCell",
                  path: "UIWindow/UINavigationController/HomeViewController/UICollectionView[0]/CategoryCell[0][\(Self.categories.firstIndex(of: category)!)]",
                  position: "0:\(Self.categories.firstIndex(of: category)!)")
            show(Page(screen: "Leafline.CategoryViewController", title: category.capitalized, url: "leafline://category/\(category)"))
        case 30..<65:
            let product = pick(Self.products)
            let row = between(0, 11)
            click(product.name, type: "UITableViewCell",
                  path: "UIWindow/UINavigationController/CategoryViewController/UITableView[0]/ProductCell[0][\(row)]",
                  position: "0:\(row)")
            show(Page(screen: "Leafline.ProductViewController", title: product.name, url: "leafline://product/\(product.id)"))
            pending.append(Call(name: "ViewProduct", properties: [
                "product_id": .string(product.id), "product_name": .string(product.name), "price": .double(product.price),
                "currency": "EUR", "in_stock": .bool(random.next() % 10 != 0),
            ], isAutoTrack: false, delay: between(5, 40)))
        case 65..<80:
            let product = pick(Self.products)
            click("Add to cart", type: "UIButton",
                  path: "UIWindow/UINavigationController/ProductViewController/UIStackView[0]/UIButton[2]", position: "0:2")
            cart.append(product)
            pending.append(Call(name: "AddToCart", properties: [
                "product_id": .string(product.id), "price": .double(product.price), "quantity": .int(between(1, 3)),
                "currency": "EUR", "cart_size": .int(Int64(cart.count)),
            ], isAutoTrack: false, delay: between(5, 40)))
        case 80..<88 where !cart.isEmpty:
            // Checkout: a timer from the cart page to payment gives `$event_duration`.
            show(Page(screen: "Leafline.CartViewController", title: "Cart", url: "leafline://cart"))
            let started = time
            click("Pay now", type: "UIButton", path: "UIWindow/UINavigationController/CartViewController/UIButton[0]", position: "0:0")
            if loginID == nil { login() }
            let total = cart.reduce(0) { $0 + $1.price }
            pending.append(Call(name: "PayOrder", properties: [
                "order_id": .string("ORD-\(between(100_000, 999_999))"), "amount": .double((total * 100).rounded() / 100),
                "currency": "EUR", "item_count": .int(Int64(cart.count)), "payment_method": .string(pick(["apple_pay", "card", "paypal"])),
                "product_ids": .list(cart.map(\.id)), "$event_duration": .double(Double(between(8_000, 90_000) + time - started) / 1000),
            ], isAutoTrack: false, delay: between(2_000, 9_000)))
            cart.removeAll()
        case 88..<94:
            pending.append(Call(name: "Search", properties: [
                "keyword": .string(pick(["matcha", "green tea", "teapot", "oolong", "decaf"])), "result_count": .int(between(0, 40)),
                "has_result": true,
            ], isAutoTrack: false, delay: between(1_500, 8_000)))
        default:
            // Background and back: an `$AppEnd`, a new session, an `$AppStart`.
            let duration = Double(between(60_000, 600_000)) / 1000
            pending.append(Call(name: "$AppEnd", properties: [
                "$screen_name": .string(page?.screen ?? ""), "$title": .string(page?.title ?? ""), "$event_duration": .double(duration),
            ], isAutoTrack: true, delay: between(1_000, 5_000)))
            sessionID = Self.uuid(&random)
            pending.append(Call(name: "$AppStart", properties: ["$is_first_time": false, "$resume_from_background": true],
                                isAutoTrack: true, delay: between(60_000, 3_600_000)))
        }
    }

    private mutating func login() {
        loginID = "user-\(between(10_000_000, 99_999_999))"
        superProperties = WorkloadPresets.iPhoneSuper
        pending.append(Call(name: "$SignUp", properties: [:], isAutoTrack: false, delay: between(500, 3_000)))
    }

    // MARK: - The service

    private static let routes: [(method: String, route: String)] = [
        ("GET", "/v1/cart"), ("POST", "/v1/cart/items"), ("GET", "/v1/products/{id}"), ("POST", "/v1/checkout"),
        ("GET", "/v1/orders/{id}"), ("GET", "/healthz"),
    ]

    private mutating func planRequest() {
        let (method, route) = pick(Self.routes)
        let statusRoll = random.next() % 100
        let status: Int64 = statusRoll < 92 ? (method == "POST" ? 201 : 200) : statusRoll < 97 ? 404 : statusRoll < 99 ? 409 : 500
        let duration = Double(between(300, 45_000)) / 1000
        pending.append(Call(name: "HandleRequest", properties: [
            "http_method": .string(method), "route": .string(route), "status": .int(status),
            "duration_ms": .double(duration), "bytes_out": .int(between(120, 18_000)),
            "request_id": .string(hex(random.next())), "tenant": .string("tenant-\(between(1, 40))"),
            // Not `user_id`: a reserved key (docs/events.md, "Validation") that the tracker refuses.
            "account_id": .string("user-\(between(10_000_000, 10_000_400))"),
            "client": .string(pick(["Leafline-iOS/5.12.0", "Leafline-Android/5.11.2", "Leafline-Web/2026.11"])),
        ], isAutoTrack: false, delay: between(0, 40)))
    }

    // MARK: - Ids

    private static func text(_ value: PropertyValue?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }

    private static func uuid(_ random: inout SplitMix64) -> String {
        let text = (hex(random.next()) + hex(random.next())).uppercased()
        let c = Array(text)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-" + String(c[20..<32])
    }
}
